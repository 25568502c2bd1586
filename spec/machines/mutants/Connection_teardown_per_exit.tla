----------------------------- MODULE Connection_teardown_per_exit -----------------------------
(***************************************************************************)
(* MUTANT teardown-per-exit: the goroutine tears down on every exit path *)
(* M1, the connection coordinator (impl/session/session.go: Session.run,   *)
(* teardown, Close, fail and the context given to New), in isolation.      *)
(*                                                                         *)
(* conn       "live", or "torn" once the connection goroutine has run      *)
(*            teardown (children stopped and joined or abandoned, the      *)
(*            Teardown step emitted, done closed).                         *)
(* exits      the exit paths that have fired: "close" (Session.Close),     *)
(*            "drop" (the context given to New is cancelled: the           *)
(*            connection dropped) and "panic" (a child's work panicked or  *)
(*            its detector failed: Session.fail). Each may fire at any     *)
(*            time and more than once; the model records that it fired     *)
(*            while the connection was live. Once torn, a path reaches     *)
(*            nobody (Close returns at once, fail's send is dropped, the   *)
(*            context is no longer watched): those firings change nothing. *)
(* handled    the exit paths the connection goroutine has acted on.        *)
(* teardowns  the times teardown has run.                                  *)
(*                                                                         *)
(* The connection goroutine waits for the first exit path to fire, runs    *)
(* teardown once, and returns: the others find it gone.                    *)
(*                                                                         *)
(* Safety: teardown happens once (TeardownOnce), and the connection is     *)
(* torn exactly when it ran, from an exit path that fired (TornByAnExit).  *)
(* Every exit path leads to teardown: the Go tests check that each of the  *)
(* three is the handled one in some reachable torn state.                  *)
(***************************************************************************)
EXTENDS Naturals

VARIABLES conn, exits, handled, teardowns

vars == <<conn, exits, handled, teardowns>>

Init ==
    /\ conn = "live"
    /\ exits = {}
    /\ handled = {}
    /\ teardowns = 0

\* Session.Close is called.
Close ==
    /\ conn = "live"
    /\ "close" \notin exits
    /\ exits' = exits \cup {"close"}
    /\ UNCHANGED <<conn, handled, teardowns>>

\* The connection drops: the context given to New is cancelled.
Drop ==
    /\ conn = "live"
    /\ "drop" \notin exits
    /\ exits' = exits \cup {"drop"}
    /\ UNCHANGED <<conn, handled, teardowns>>

\* A child's work panics (or its detector fails): Session.fail.
ChildPanics ==
    /\ conn = "live"
    /\ "panic" \notin exits
    /\ exits' = exits \cup {"panic"}
    /\ UNCHANGED <<conn, handled, teardowns>>

\* The connection goroutine takes the first exit path and tears down.
TeardownOnClose ==
    /\ "close" \notin handled
    /\ "close" \in exits
    /\ conn' = "torn"
    /\ handled' = handled \cup {"close"}
    /\ teardowns' = teardowns + 1
    /\ UNCHANGED exits

TeardownOnDrop ==
    /\ "drop" \notin handled
    /\ "drop" \in exits
    /\ conn' = "torn"
    /\ handled' = handled \cup {"drop"}
    /\ teardowns' = teardowns + 1
    /\ UNCHANGED exits

TeardownOnPanic ==
    /\ "panic" \notin handled
    /\ "panic" \in exits
    /\ conn' = "torn"
    /\ handled' = handled \cup {"panic"}
    /\ teardowns' = teardowns + 1
    /\ UNCHANGED exits

\* Torn down: the connection's work is over (a trace may end here).
Done ==
    /\ conn = "torn"
    /\ UNCHANGED vars

Next ==
    \/ Close
    \/ Drop
    \/ ChildPanics
    \/ TeardownOnClose
    \/ TeardownOnDrop
    \/ TeardownOnPanic
    \/ Done

Spec == Init /\ [][Next]_vars

Paths == {"close", "drop", "panic"}

TypeOK ==
    /\ conn \in {"live", "torn"}
    /\ exits \subseteq Paths
    /\ handled \subseteq Paths
    /\ teardowns \in 0..3

TeardownOnce == teardowns <= 1

TornByAnExit ==
    /\ (conn = "torn") <=> (teardowns > 0)
    /\ (conn = "torn") <=> (handled /= {})
    /\ handled \subseteq exits
=============================================================================
