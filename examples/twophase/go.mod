module example.com/twophase

go 1.26.8

require github.com/tracecheck/tracecheck v0.0.0-00010101000000-000000000000

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace github.com/tracecheck/tracecheck => ../..
