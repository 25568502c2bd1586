package session

import "errors"

// Errors returned by a Session. Test for them with errors.Is.
var (
	// ErrClosed: the session is torn down (or tearing down); nothing new
	// starts.
	ErrClosed = errors.New("session: closed")
	// ErrBusy: a compaction is already running.
	ErrBusy = errors.New("session: compaction already running")
	// ErrNoResponse: the response named is not the active one.
	ErrNoResponse = errors.New("session: no such active response")
	// ErrCanceled is a response's Err after CancelResponse.
	ErrCanceled = errors.New("session: response canceled")
	// ErrPreempted is a response's Err when a newer response replaced it.
	ErrPreempted = errors.New("session: response preempted by a newer one")
	// ErrChildPanic wraps a panic recovered from a child's work.
	ErrChildPanic = errors.New("session: panic in child work")
	// ErrConnectionDropped: the connection's context ended.
	ErrConnectionDropped = errors.New("session: connection dropped")
	// ErrAbandoned: teardown gave up waiting for a child that ignored
	// cancellation; the child may still be running.
	ErrAbandoned = errors.New("session: child abandoned at teardown")
	// ErrConfig: the Config is invalid.
	ErrConfig = errors.New("session: invalid config")
)
