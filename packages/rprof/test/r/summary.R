# Usage: Rscript summary.R FILE VIEW OUT.csv [FILE VIEW OUT.csv ...]
# Writes R's summaryRprof() by.total table for each VIEW (hide = per function, show = per
# line, memory = per function with mem.total) as CSV: key, self (s), total (s), mem (MB), plus
# a row "__interval__" with the sample interval and the sampling time in seconds.
# chunksize is larger than any test file, so that summaryRprof's per-chunk memory differences
# do not restart in the middle.
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) %% 3 == 0)
for (k in seq(1, length(args), by = 3)) {
  file <- args[[k]]; view <- args[[k + 1]]; out <- args[[k + 2]]
  s <- switch(view,
    hide = summaryRprof(file, chunksize = 1e7),
    show = summaryRprof(file, chunksize = 1e7, lines = "show"),
    memory = summaryRprof(file, chunksize = 1e7, memory = "both"),
    stop("unknown view ", view)
  )
  t <- s$by.total
  df <- data.frame(key = rownames(t), self = t$self.time, total = t$total.time,
                   mem = if (is.null(t$mem.total)) NA else t$mem.total)
  df <- rbind(df, data.frame(key = "__interval__", self = s$sample.interval, total = s$sampling.time, mem = NA))
  write.csv(df, out, row.names = FALSE)
}
