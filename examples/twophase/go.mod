module example.com/twophase

go 1.26.8

require github.com/tracecheck/tracecheck v0.0.0-00010101000000-000000000000

replace github.com/tracecheck/tracecheck => ../..
