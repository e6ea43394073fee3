;; The Rprof line index (WebAssembly text; built into line-index-wasm.ts by
;; scripts/build-line-index.mjs, driven by line-index.ts, which explains why it exists).
;;
;; `scan` splits the bytes of a window into lines (LF, CRLF or CR ends) and gives each line an
;; id: equal keys get equal ids, for the whole parse. The key of a line is its bytes, or with a
;; well-formed memory prefix `:small:big:nodes:dups:` (1 to 15 digits each, as the reader's
;; `memoryPrefix` accepts) the bytes after it. Id 0 means "no id" (the caller then decodes the
;; line as text): the table is full, the key store is full, the key is too long, or the line
;; probed too many slots. Every bound is a constant here, so a crafted file cannot make the index
;; slow or big; it can only make lines take the caller's slower text path.
;;
;; Memory layout (byte offsets; line-index.ts has the same constants):
;;   SLOTS    0x000000  131,072 slots x 4 B: entry id, 0 = empty (open addressing, linear probing)
;;   ENTRIES  0x080000  65,536 entries x 12 B: key offset, key length, hash (id e at (e-1)*12)
;;   RECORDS  0x140000  16,384 records x 16 B, one per line: id, line start, key start, line end
;;   WINDOW   0x180000  1 MiB of input: the caller's carried incomplete line, then new bytes
;;   KEYS     0x280000  the keys' bytes, at most 16 MiB; memory grows as they come
(module
  (memory (export "memory") 40 296)

  (global $seed (mut i32) (i32.const 0))
  ;; Entries so far (ids are 1..$count).
  (global $count (mut i32) (i32.const 0))
  ;; End of the key store.
  (global $keyEnd (mut i32) (i32.const 0x280000))
  ;; Where the last `scan` stopped: the start of the first line it did not record.
  (global $next (mut i32) (i32.const 0))

  ;; Sets the seed of the hashes (random per parse; an instance serves one parse).
  (func (export "init") (param $seed i32)
    (global.set $seed (local.get $seed)))

  (func (export "next") (result i32) (global.get $next))

  ;; Records the complete lines in [p, end) (at most 16,384; a line is complete once its LF or CR
  ;; is in the window) and returns how many. `next` then tells where to continue.
  (func (export "scan") (param $p i32) (param $end i32) (result i32)
    (local $n i32) (local $start i32) (local $keyStart i32) (local $lineEnd i32)
    (local $q i32) (local $digits i32) (local $group i32) (local $c i32) (local $h i32)
    (block $stop
      (loop $lines
        (br_if $stop (i32.eq (local.get $n) (i32.const 16384)))
        (local.set $start (local.get $p))
        (local.set $keyStart (local.get $p))
        ;; A memory prefix: four groups of 1-15 digits, each followed by ':'.
        (block $noPrefix
          (br_if $noPrefix (i32.ge_u (local.get $p) (local.get $end)))
          (br_if $noPrefix (i32.ne (i32.load8_u (local.get $p)) (i32.const 58)))
          (local.set $q (i32.add (local.get $p) (i32.const 1)))
          (local.set $group (i32.const 0))
          (loop $groups
            (local.set $digits (local.get $q))
            (block $endDigits
              (loop $digit
                (br_if $endDigits (i32.ge_u (local.get $q) (local.get $end)))
                (br_if $endDigits (i32.gt_u (i32.sub (i32.load8_u (local.get $q)) (i32.const 48)) (i32.const 9)))
                (local.set $q (i32.add (local.get $q) (i32.const 1)))
                (br $digit)))
            (local.set $digits (i32.sub (local.get $q) (local.get $digits)))
            (br_if $noPrefix (i32.eqz (local.get $digits)))
            (br_if $noPrefix (i32.gt_u (local.get $digits) (i32.const 15)))
            (br_if $noPrefix (i32.ge_u (local.get $q) (local.get $end)))
            (br_if $noPrefix (i32.ne (i32.load8_u (local.get $q)) (i32.const 58)))
            (local.set $q (i32.add (local.get $q) (i32.const 1)))
            (local.set $group (i32.add (local.get $group) (i32.const 1)))
            (br_if $groups (i32.lt_u (local.get $group) (i32.const 4))))
          (local.set $keyStart (local.get $q))
          (local.set $p (local.get $q)))
        ;; The key's bytes up to the line end, hashed (FNV-1a from the seed).
        (local.set $h (i32.xor (global.get $seed) (i32.const 0x811c9dc5)))
        (block $eol
          (loop $bytes
            (br_if $stop (i32.ge_u (local.get $p) (local.get $end))) ;; incomplete: the caller carries it
            (local.set $c (i32.load8_u (local.get $p)))
            (br_if $eol (i32.eq (local.get $c) (i32.const 10)))
            (br_if $eol (i32.eq (local.get $c) (i32.const 13)))
            (local.set $h (i32.mul (i32.xor (local.get $h) (local.get $c)) (i32.const 0x01000193)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $bytes)))
        (local.set $lineEnd (local.get $p))
        ;; Past the terminator: CRLF is one (a CR at the window's end: the caller skips a LF
        ;; that starts the next bytes).
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.and (i32.eq (local.get $c) (i32.const 13))
                     (i32.lt_u (local.get $p) (local.get $end)))
          (then (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 10))
            (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))))
        (local.set $q (i32.add (i32.const 0x140000) (i32.shl (local.get $n) (i32.const 4))))
        (i32.store (local.get $q)
          (call $intern (local.get $keyStart) (i32.sub (local.get $lineEnd) (local.get $keyStart)) (call $mix (local.get $h))))
        (i32.store offset=4 (local.get $q) (local.get $start))
        (i32.store offset=8 (local.get $q) (local.get $keyStart))
        (i32.store offset=12 (local.get $q) (local.get $lineEnd))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $lines)))
    (global.set $next (local.get $start))
    ;; Stopped at the record limit: the next line starts at p, not at the last recorded line.
    (if (i32.eq (local.get $n) (i32.const 16384)) (then (global.set $next (local.get $p))))
    (local.get $n))

  ;; murmur3's finalizer: spreads FNV's bits over the slot bits.
  (func $mix (param $h i32) (result i32)
    (local.set $h (i32.mul (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))) (i32.const 0x85ebca6b)))
    (local.set $h (i32.mul (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 13))) (i32.const 0xc2b2ae35)))
    (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))))

  ;; The id of the key at [key, key + len) with hash h, added if new; 0 when it gets none.
  (func $intern (param $key i32) (param $len i32) (param $h i32) (result i32)
    (local $slot i32) (local $probes i32) (local $e i32) (local $entry i32) (local $pages i32)
    (if (i32.gt_u (local.get $len) (i32.const 0x40000)) (then (return (i32.const 0)))) ;; keys <= 256 KiB
    (local.set $slot (i32.and (local.get $h) (i32.const 0x1ffff)))
    (loop $probe
      (local.set $e (i32.load (i32.shl (local.get $slot) (i32.const 2))))
      (if (i32.eqz (local.get $e))
        (then
          ;; New key: at most 65,536 entries and 16 MiB of keys.
          (if (i32.ge_u (global.get $count) (i32.const 65536)) (then (return (i32.const 0))))
          (if (i32.gt_u (i32.add (global.get $keyEnd) (local.get $len)) (i32.const 0x1280000)) (then (return (i32.const 0))))
          (local.set $pages (i32.shr_u (i32.add (i32.add (global.get $keyEnd) (local.get $len)) (i32.const 0xffff)) (i32.const 16)))
          (if (i32.gt_u (local.get $pages) (memory.size))
            (then (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
              (then (return (i32.const 0))))))
          (global.set $count (i32.add (global.get $count) (i32.const 1)))
          (local.set $e (global.get $count))
          (i32.store (i32.shl (local.get $slot) (i32.const 2)) (local.get $e))
          (local.set $entry (i32.add (i32.const 0x80000) (i32.mul (i32.sub (local.get $e) (i32.const 1)) (i32.const 12))))
          (i32.store (local.get $entry) (global.get $keyEnd))
          (i32.store offset=4 (local.get $entry) (local.get $len))
          (i32.store offset=8 (local.get $entry) (local.get $h))
          (memory.copy (global.get $keyEnd) (local.get $key) (local.get $len))
          (global.set $keyEnd (i32.add (global.get $keyEnd) (local.get $len)))
          (return (local.get $e))))
      (local.set $entry (i32.add (i32.const 0x80000) (i32.mul (i32.sub (local.get $e) (i32.const 1)) (i32.const 12))))
      (if (i32.and (i32.eq (i32.load offset=8 (local.get $entry)) (local.get $h))
                   (i32.eq (i32.load offset=4 (local.get $entry)) (local.get $len)))
        (then (if (call $equal (i32.load (local.get $entry)) (local.get $key) (local.get $len))
          (then (return (local.get $e))))))
      ;; At most 64 probes: a line that finds neither its key nor a free slot gets no id.
      (local.set $probes (i32.add (local.get $probes) (i32.const 1)))
      (if (i32.ge_u (local.get $probes) (i32.const 64)) (then (return (i32.const 0))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (i32.const 0x1ffff)))
      (br $probe))
    (unreachable))

  ;; Whether the len bytes at a and b are equal (8 at a time, then the rest).
  (func $equal (param $a i32) (param $b i32) (param $len i32) (result i32)
    (local $k i32)
    (block $tail
      (loop $words
        (br_if $tail (i32.gt_u (i32.add (local.get $k) (i32.const 8)) (local.get $len)))
        (if (i64.ne (i64.load (i32.add (local.get $a) (local.get $k))) (i64.load (i32.add (local.get $b) (local.get $k))))
          (then (return (i32.const 0))))
        (local.set $k (i32.add (local.get $k) (i32.const 8)))
        (br $words)))
    (loop $bytes
      (if (i32.lt_u (local.get $k) (local.get $len))
        (then
          (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $k))) (i32.load8_u (i32.add (local.get $b) (local.get $k))))
            (then (return (i32.const 0))))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br $bytes))))
    (i32.const 1))
)
