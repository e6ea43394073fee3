# Profiles fib.R with line and memory profiling, writing fib.Rprof.out.
# Run from this folder: Rscript profile-fib.R
set.seed(1)
options(keep.source = TRUE)
invisible(compiler::enableJIT(0))
source("fib.R", keep.source = TRUE)
Rprof("fib.Rprof.out", interval = 0.005, line.profiling = TRUE, memory.profiling = TRUE)
main()
Rprof(NULL)
