------------------------------ MODULE Program_interrupt_after_published --------------------
\* MUTANT of spec/Program.tla: an interrupt after publication (InterruptBeforePublication from Published).
\* TLC must report PublicationIsTerminal violated.
(***************************************************************************)
(* Python execution and checkpoint publication.                            *)
(*                                                                         *)
(* A ready program is executed; after a successful evaluation its          *)
(* checkpoint is staged, reloaded and verified, then published atomically. *)
(* Failure or interruption before publication leaves no published          *)
(* checkpoint, and publication is terminal.                                *)
(*                                                                         *)
(* phase      the lifecycle state of seed 000's chart                      *)
(* verified   the staged checkpoint was reloaded and verified              *)
(* published  the checkpoint was atomically published                      *)
(*                                                                         *)
(* Terminal phases stutter through the explicit action Terminated, so the  *)
(* deadlock check holds.  The model leaves out process death during        *)
(* receipt writes, power loss, storage durability, malicious edits and     *)
(* concurrent mutation of a live model (see formal-verification/README).   *)
(***************************************************************************)
VARIABLES phase, verified, published

vars == <<phase, verified, published>>

Phases == {"Ready", "Running", "Staging", "Verified",
           "Published", "Failed", "Interrupted"}

TerminalPhases == {"Published", "Failed", "Interrupted"}

TypeOK ==
    /\ phase \in Phases
    /\ verified \in BOOLEAN
    /\ published \in BOOLEAN

Init ==
    /\ phase = "Ready"
    /\ verified = FALSE
    /\ published = FALSE

\* Ready --> Running: Execute Python
ExecutePython ==
    /\ phase = "Ready"
    /\ phase' = "Running"
    /\ UNCHANGED <<verified, published>>

\* Running --> Staging: Program succeeds
ProgramSucceeds ==
    /\ phase = "Running"
    /\ phase' = "Staging"
    /\ UNCHANGED <<verified, published>>

\* Running --> Failed: Execution fails
ExecutionFails ==
    /\ phase = "Running"
    /\ phase' = "Failed"
    /\ UNCHANGED <<verified, published>>

\* Running --> Interrupted, Staging --> Interrupted: Interrupt
Interrupt ==
    /\ phase \in {"Running", "Staging"}
    /\ phase' = "Interrupted"
    /\ UNCHANGED <<verified, published>>

\* Staging --> Verified: Reload and verify
ReloadAndVerify ==
    /\ phase = "Staging"
    /\ phase' = "Verified"
    /\ verified' = TRUE
    /\ UNCHANGED published

\* Staging --> Failed: Save or verification fails
SaveOrVerificationFails ==
    /\ phase = "Staging"
    /\ phase' = "Failed"
    /\ UNCHANGED <<verified, published>>

\* Verified --> Published: Atomic publication
AtomicPublication ==
    /\ phase = "Verified"
    /\ phase' = "Published"
    /\ published' = TRUE
    /\ UNCHANGED verified

\* Verified --> Failed: Publication fails
PublicationFails ==
    /\ phase = "Verified"
    /\ phase' = "Failed"
    /\ UNCHANGED <<verified, published>>

\* Verified --> Interrupted: Interrupt before publication
InterruptBeforePublication ==
    /\ phase \in {"Verified", "Published"}
    /\ phase' = "Interrupted"
    /\ UNCHANGED <<verified, published>>

\* The chart hides these: a terminal phase stutters, explicitly.
Terminated ==
    /\ phase \in TerminalPhases
    /\ UNCHANGED vars

Next ==
    \/ ExecutePython
    \/ ProgramSucceeds
    \/ ExecutionFails
    \/ ReloadAndVerify
    \/ SaveOrVerificationFails
    \/ Interrupt
    \/ AtomicPublication
    \/ PublicationFails
    \/ InterruptBeforePublication
    \/ Terminated

Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* Safety.                                                                 *)
(***************************************************************************)

\* A published checkpoint was reloaded and verified first.
PublishedOnlyVerified ==
    (published \/ phase = "Published") => (verified /\ published)

\* A failed run never leaves a published checkpoint.
FailedNeverPublished ==
    phase = "Failed" => ~published

\* Publication is terminal: once published, every step keeps it published
\* and in phase Published.  A property of steps, so an action property.
PublicationIsTerminal ==
    [][published => (published' /\ phase' = "Published")]_vars

=============================================================================
