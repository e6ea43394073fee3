-- Example questions answered with SQL over the dm-export relational model.
-- Parameters are written :name (SQLite and DuckDB bind them by name; with psql, replace them by
-- literals or use \set and :'name'). :sample_type is a sample type name (sample_types.type),
-- e.g. 'cpu', 'samples' or 'alloc_space'. Each query works for one profile (:profile_id) of a
-- database holding many.

-- name: top_functions_self
-- Top functions by self (flat) value: the value of the samples whose leaf frame (innermost line
-- of the innermost location, so inlined code is charged to the inlined function) is the function.
SELECT f.name, SUM(v.value) AS self_value
FROM sample_locations sl
JOIN location_lines ll ON ll.profile_id = sl.profile_id AND ll.location_id = sl.location_id AND ll.position = 0
JOIN functions f ON f.profile_id = ll.profile_id AND f.function_id = ll.function_id
JOIN sample_values v ON v.profile_id = sl.profile_id AND v.sample_id = sl.sample_id
JOIN sample_types st ON st.profile_id = v.profile_id AND st.sample_type_id = v.sample_type_id
WHERE sl.profile_id = :profile_id AND sl.position = 0 AND st.type = :sample_type
GROUP BY f.name
ORDER BY self_value DESC, f.name
LIMIT 20;

-- name: top_functions_total
-- Top functions by total (cumulative) value: the value of the samples with the function anywhere
-- on the stack, inline frames included, each sample counted once per function (recursion-safe).
WITH on_stack AS (
  SELECT DISTINCT sl.sample_id, f.name
  FROM sample_locations sl
  JOIN location_lines ll ON ll.profile_id = sl.profile_id AND ll.location_id = sl.location_id
  JOIN functions f ON f.profile_id = ll.profile_id AND f.function_id = ll.function_id
  WHERE sl.profile_id = :profile_id
)
SELECT s.name, SUM(v.value) AS total_value
FROM on_stack s
JOIN sample_values v ON v.profile_id = :profile_id AND v.sample_id = s.sample_id
JOIN sample_types st ON st.profile_id = v.profile_id AND st.sample_type_id = v.sample_type_id
WHERE st.type = :sample_type
GROUP BY s.name
ORDER BY total_value DESC, s.name
LIMIT 20;

-- name: callers
-- Callers of a function: for each function found directly above :function_name on a stack (the
-- next outer frame, inline frames expanded), the value of the samples where it calls it, each
-- sample counted once per caller.
WITH frames AS (
  SELECT sl.sample_id, f.name,
         ROW_NUMBER() OVER (PARTITION BY sl.sample_id ORDER BY sl.position, ll.position) AS depth
  FROM sample_locations sl
  JOIN location_lines ll ON ll.profile_id = sl.profile_id AND ll.location_id = sl.location_id
  JOIN functions f ON f.profile_id = ll.profile_id AND f.function_id = ll.function_id
  WHERE sl.profile_id = :profile_id
),
edges AS (
  SELECT DISTINCT callee.sample_id, caller.name AS caller
  FROM frames callee
  JOIN frames caller ON caller.sample_id = callee.sample_id AND caller.depth = callee.depth + 1
  WHERE callee.name = :function_name
)
SELECT e.caller, SUM(v.value) AS value
FROM edges e
JOIN sample_values v ON v.profile_id = :profile_id AND v.sample_id = e.sample_id
JOIN sample_types st ON st.profile_id = v.profile_id AND st.sample_type_id = v.sample_type_id
WHERE st.type = :sample_type
GROUP BY e.caller
ORDER BY value DESC, e.caller;

-- name: diff_by_function
-- Diff of two profiles by function: self value per function in :base_profile_id and in
-- :profile_id (same sample type name), and the change, largest changes first.
WITH self AS (
  SELECT sl.profile_id, f.name, SUM(v.value) AS value
  FROM sample_locations sl
  JOIN location_lines ll ON ll.profile_id = sl.profile_id AND ll.location_id = sl.location_id AND ll.position = 0
  JOIN functions f ON f.profile_id = ll.profile_id AND f.function_id = ll.function_id
  JOIN sample_values v ON v.profile_id = sl.profile_id AND v.sample_id = sl.sample_id
  JOIN sample_types st ON st.profile_id = v.profile_id AND st.sample_type_id = v.sample_type_id
  WHERE sl.profile_id IN (:base_profile_id, :profile_id) AND sl.position = 0 AND st.type = :sample_type
  GROUP BY sl.profile_id, f.name
)
SELECT name,
       SUM(CASE WHEN profile_id = :base_profile_id THEN value ELSE 0 END) AS base_value,
       SUM(CASE WHEN profile_id = :profile_id THEN value ELSE 0 END) AS new_value,
       SUM(CASE WHEN profile_id = :profile_id THEN value ELSE 0 END)
         - SUM(CASE WHEN profile_id = :base_profile_id THEN value ELSE 0 END) AS delta
FROM self
GROUP BY name
ORDER BY ABS(SUM(CASE WHEN profile_id = :profile_id THEN value ELSE 0 END)
           - SUM(CASE WHEN profile_id = :base_profile_id THEN value ELSE 0 END)) DESC, name;
