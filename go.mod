module github.com/tracecheck/tracecheck

go 1.26.8
