----------------------------- MODULE Compaction -----------------------------
(***************************************************************************)
(* M4, history compaction (impl/session/compaction.go and the shutdown of  *)
(* its coordinator in coord.go), in isolation.                             *)
(*                                                                         *)
(* conn  the connection as the compaction coordinator's callers see it:    *)
(*       "live", or "torn" once teardown has begun (Close, a dropped       *)
(*       connection or a child's panic).                                   *)
(* comp  the coordinator's state: "idle", "running" (one job in flight),   *)
(*       "terminated" (stopped by teardown: it refuses every request).     *)
(* jobs  compaction goroutines started and not yet joined.                 *)
(*                                                                         *)
(* A trigger that passed TriggerCompaction's check of conn before teardown *)
(* began may still be served until the coordinator takes its stop request, *)
(* so Trigger does not read conn; Shutdown (the stop request, served after *)
(* teardown began) cancels and joins the job in flight.                    *)
(*                                                                         *)
(* Safety: single flight (SingleFlight); no job outlives or starts after   *)
(* the coordinator's teardown (NoneAfterTeardown).                         *)
(***************************************************************************)
EXTENDS Naturals

VARIABLES conn, comp, jobs

vars == <<conn, comp, jobs>>

Init ==
    /\ conn = "live"
    /\ comp = "idle"
    /\ jobs = 0

\* TriggerCompaction served: a job starts; while one runs, ErrBusy.
Trigger ==
    /\ comp = "idle"
    /\ comp' = "running"
    /\ jobs' = jobs + 1
    /\ UNCHANGED conn

\* The job returns and the coordinator steps its end (CompFinish).
JobEnds ==
    /\ comp = "running"
    /\ jobs > 0
    /\ comp' = "idle"
    /\ jobs' = jobs - 1
    /\ UNCHANGED conn

\* Teardown begins: the connection refuses new work.
ConnTorn ==
    /\ conn = "live"
    /\ conn' = "torn"
    /\ UNCHANGED <<comp, jobs>>

\* The coordinator takes its stop request: it cancels and joins the job in
\* flight, and terminates.
Shutdown ==
    /\ conn = "torn"
    /\ comp /= "terminated"
    /\ comp' = "terminated"
    /\ jobs' = 0
    /\ UNCHANGED conn

\* Terminated: the coordinator's work is over (a trace may end here).
Done ==
    /\ comp = "terminated"
    /\ UNCHANGED vars

Next ==
    \/ Trigger
    \/ JobEnds
    \/ ConnTorn
    \/ Shutdown
    \/ Done

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ conn \in {"live", "torn"}
    /\ comp \in {"idle", "running", "terminated"}
    /\ jobs \in 0..2

SingleFlight == jobs = (IF comp = "running" THEN 1 ELSE 0)

NoneAfterTeardown == (comp = "terminated") => (jobs = 0 /\ conn = "torn")
=============================================================================
