------------------------------ MODULE Response_supersede_keeps_old ------------------------------
(***************************************************************************)
(* MUTANT supersede-keeps-old: Start launches the new response without ending the old *)
(* M3, the response coordinator (impl/session/resp.go, the respCore step   *)
(* function, and its shutdown in coord.go), in isolation.                  *)
(*                                                                         *)
(* conn   the connection as the coordinator's callers see it: "live", or   *)
(*        "torn" once teardown has begun.                                  *)
(* coord  respCore's state: "idle", "active" (one response live) or        *)
(*        "terminated" (stopped by teardown: it refuses every request).    *)
(* r      the responses, numbered 1..2 as the coordinator numbers them     *)
(*        (the model stops after two): "none" (not started), "live"        *)
(*        (started and neither ended nor superseded), "ended" (its         *)
(*        pipeline halted: cancelled, finished, barged in on, superseded,  *)
(*        completed, failed, or shut down).                                *)
(* next   the last number handed out.                                      *)
(*                                                                         *)
(* StartResponse while a response is active supersedes it: in one step of *)
(* the coordinator the old response is halted (its stream cut) and ended   *)
(* before the new one's pipeline is launched. Like compaction, a start     *)
(* that passed the caller's side before teardown began is served until the *)
(* coordinator takes its stop request.                                     *)
(*                                                                         *)
(* Safety: at most one live response (AtMostOneLive); the live one is the  *)
(* newest and exactly when the coordinator is active (LiveIsActive); none  *)
(* after teardown (NoneAfterTeardown).                                     *)
(***************************************************************************)
EXTENDS Naturals

VARIABLES conn, coord, r, next

vars == <<conn, coord, r, next>>

N == 1..2

Init ==
    /\ conn = "live"
    /\ coord = "idle"
    /\ r = [i \in N |-> "none"]
    /\ next = 0

\* StartResponse served: the active response, if any, is ended (halted,
\* its stream cut) and the next one starts live.
Start ==
    /\ coord /= "terminated"
    /\ next < 2
    /\ next' = next + 1
    /\ r' = [r EXCEPT ![next + 1] = "live"]
    /\ coord' = "active"
    /\ UNCHANGED conn

\* The active response ends: CancelResponse, FinishResponse, a barge-in,
\* or its pipeline's exit (complete or failed).
End ==
    /\ coord = "active"
    /\ r' = [r EXCEPT ![next] = "ended"]
    /\ coord' = "idle"
    /\ UNCHANGED <<conn, next>>

\* Teardown begins: the connection refuses new work.
ConnTorn ==
    /\ conn = "live"
    /\ conn' = "torn"
    /\ UNCHANGED <<coord, r, next>>

\* The coordinator takes its stop request: it ends every live response and
\* terminates.
Shutdown ==
    /\ conn = "torn"
    /\ coord /= "terminated"
    /\ coord' = "terminated"
    /\ r' = [i \in N |-> IF r[i] = "live" THEN "ended" ELSE r[i]]
    /\ UNCHANGED <<conn, next>>

\* Terminated: the coordinator's work is over (a trace may end here).
Done ==
    /\ coord = "terminated"
    /\ UNCHANGED vars

Next ==
    \/ Start
    \/ End
    \/ ConnTorn
    \/ Shutdown
    \/ Done

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ conn \in {"live", "torn"}
    /\ coord \in {"idle", "active", "terminated"}
    /\ r \in [N -> {"none", "live", "ended"}]
    /\ next \in 0..2

AtMostOneLive == \A i, j \in N : (r[i] = "live" /\ r[j] = "live") => i = j

LiveIsActive ==
    /\ (coord = "active") <=> (\E i \in N : r[i] = "live")
    /\ \A i \in N : r[i] = "live" => i = next

NoneAfterTeardown ==
    coord = "terminated" => (conn = "torn" /\ \A i \in N : r[i] /= "live")
=============================================================================
