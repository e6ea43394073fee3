# A small R program whose profile ships as the README's example (examples/r/fib.Rprof.out).
# Regenerate with: Rscript profile-fib.R (from this folder).
fib <- function(n) if (n < 2) n else fib(n - 1) + fib(n - 2)

build_table <- function(k) {
  rows <- lapply(seq_len(k), function(i) data.frame(i = i, sq = i^2, f = fib(14)))
  do.call(rbind, rows)
}

summarise <- function(tbl) {
  s <- 0
  for (i in seq_len(nrow(tbl))) s <- s + sqrt(tbl$sq[i]) * tbl$f[i]
  s
}

main <- function() {
  tbl <- build_table(1200)
  for (r in 1:40) summarise(tbl)
  sort(runif(2e5))
  invisible(tbl)
}
