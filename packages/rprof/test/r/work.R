# Code profiled by the interop tests: nested functions in a sourced file (so that line profiling
# has srcrefs), allocation (memory profiling, GC), and R's special call names.
leaf_sum <- function(n) {
  s <- 0
  for (i in seq_len(n)) {
    s <- s + i %% 7
  }
  s
}

leaf_alloc <- function(n) {
  x <- numeric(0)
  for (i in seq_len(n)) {
    x <- c(x, i)
  }
  length(x)
}

fns <- list(a = function(n) leaf_sum(n))
obj <- list(run = function(n) leaf_alloc(n))

middle <- function(k) {
  a <- leaf_sum(2000 * k)
  b <- fns[["a"]](1000)
  c <- obj$run(300)
  d <- (function(m) leaf_sum(m))(500)
  e <- utils::head(letters, 3)
  a + b + c + d + length(e)
}

outer_work <- function(seconds) {
  t0 <- proc.time()[["elapsed"]]
  total <- 0
  while (proc.time()[["elapsed"]] - t0 < seconds) {
    total <- total + middle(3)
  }
  total
}
