# Usage: Rscript profile.R MODE OUT [SECONDS]
# Profiles outer_work() (from work.R) with Rprof in one mode:
# plain, line, memory, gc, filter, append, all.
args <- commandArgs(trailingOnly = TRUE)
mode <- args[[1]]
out <- args[[2]]
seconds <- if (length(args) >= 3) as.numeric(args[[3]]) else 0.6
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[[1]]))
source(file.path(here, "work.R"), keep.source = TRUE)
iv <- 0.005
run <- function(append = FALSE) {
  switch(mode,
    plain = Rprof(out, interval = iv, append = append),
    line = Rprof(out, interval = iv, line.profiling = TRUE, append = append),
    memory = Rprof(out, interval = iv, memory.profiling = TRUE, append = append),
    gc = Rprof(out, interval = iv, gc.profiling = TRUE, append = append),
    filter = Rprof(out, interval = iv, line.profiling = TRUE, filter.callframes = TRUE, append = append),
    append = Rprof(out, interval = iv, line.profiling = TRUE, append = append),
    all = Rprof(out, interval = iv, line.profiling = TRUE, memory.profiling = TRUE, gc.profiling = TRUE, append = append),
    stop("unknown mode ", mode)
  )
  invisible(outer_work(seconds))
  Rprof(NULL)
}
run()
if (mode == "append") {
  leaf_sum(10) # work between the two sessions
  run(append = TRUE)
}
