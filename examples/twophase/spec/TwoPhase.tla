------------------------------ MODULE TwoPhase ------------------------------
(***************************************************************************)
(* Two-phase commit: a transaction manager (TM) and resource managers      *)
(* (RMs) agree to commit a transaction or to abort it.  Each RM is first   *)
(* working; it may prepare (and tell the TM so) or abort on its own.  Once *)
(* every RM has prepared, the TM may commit; at any time before deciding   *)
(* it may abort.  Its decision travels as a message that the RMs follow.   *)
(* Messages are a set that only grows: a message once sent may be read any *)
(* number of times, in any order.                                          *)
(*                                                                         *)
(* This is the protocol of Gray and Lamport's "Consensus on Transaction    *)
(* Commit", written for this example (tracecheck's third worked example,   *)
(* outside its module): see ../README.md.                                  *)
(***************************************************************************)
CONSTANT RM

VARIABLES rmState, tmState, tmPrepared, msgs

vars == <<rmState, tmState, tmPrepared, msgs>>

Messages ==
    [type : {"Prepared"}, rm : RM] \cup [type : {"Commit", "Abort"}]

TypeOK ==
    /\ rmState \in [RM -> {"working", "prepared", "committed", "aborted"}]
    /\ tmState \in {"init", "committed", "aborted"}
    /\ tmPrepared \subseteq RM
    /\ msgs \subseteq Messages

Init ==
    /\ rmState = [r \in RM |-> "working"]
    /\ tmState = "init"
    /\ tmPrepared = {}
    /\ msgs = {}

\* The TM learns that r has prepared.
TMRcvPrepared(r) ==
    /\ tmState = "init"
    /\ [type |-> "Prepared", rm |-> r] \in msgs
    /\ tmPrepared' = tmPrepared \cup {r}
    /\ UNCHANGED <<rmState, tmState, msgs>>

\* Every RM has prepared: the TM commits.
TMCommit ==
    /\ tmState = "init"
    /\ tmPrepared = RM
    /\ tmState' = "committed"
    /\ msgs' = msgs \cup {[type |-> "Commit"]}
    /\ UNCHANGED <<rmState, tmPrepared>>

\* The TM aborts, before it has decided otherwise.
TMAbort ==
    /\ tmState = "init"
    /\ tmState' = "aborted"
    /\ msgs' = msgs \cup {[type |-> "Abort"]}
    /\ UNCHANGED <<rmState, tmPrepared>>

\* r prepares and says so.
RMPrepare(r) ==
    /\ rmState[r] = "working"
    /\ rmState' = [rmState EXCEPT ![r] = "prepared"]
    /\ msgs' = msgs \cup {[type |-> "Prepared", rm |-> r]}
    /\ UNCHANGED <<tmState, tmPrepared>>

\* r gives up on its own, while still working.
RMChooseToAbort(r) ==
    /\ rmState[r] = "working"
    /\ rmState' = [rmState EXCEPT ![r] = "aborted"]
    /\ UNCHANGED <<tmState, tmPrepared, msgs>>

\* r follows the TM's decision.
RMRcvCommitMsg(r) ==
    /\ [type |-> "Commit"] \in msgs
    /\ rmState' = [rmState EXCEPT ![r] = "committed"]
    /\ UNCHANGED <<tmState, tmPrepared, msgs>>

RMRcvAbortMsg(r) ==
    /\ [type |-> "Abort"] \in msgs
    /\ rmState' = [rmState EXCEPT ![r] = "aborted"]
    /\ UNCHANGED <<tmState, tmPrepared, msgs>>

Next ==
    \/ TMCommit \/ TMAbort
    \/ \E r \in RM :
        TMRcvPrepared(r) \/ RMPrepare(r) \/ RMChooseToAbort(r)
          \/ RMRcvCommitMsg(r) \/ RMRcvAbortMsg(r)

Spec == Init /\ [][Next]_vars

\* No RM commits while another aborts.
Consistent ==
    \A r1, r2 \in RM : ~(rmState[r1] = "aborted" /\ rmState[r2] = "committed")

=============================================================================
