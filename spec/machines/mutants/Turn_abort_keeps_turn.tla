-------------------------------- MODULE Turn_abort_keeps_turn --------------------------------
(***************************************************************************)
(* MUTANT abort-keeps-turn: Abort leaves the open turn open *)
(* M2, turn detection (impl/session/vad.go: the vadCore step function and  *)
(* its coordinator's stop), in isolation.                                  *)
(*                                                                         *)
(* vad      vadCore's state: "silent", "speech" (the detector has heard    *)
(*          speech and not yet enough silence) or "terminated" (the VAD    *)
(*          goroutine stopped and joined).                                 *)
(* silence  consecutive non-speech frames heard in speech; the turn ends   *)
(*          at the second (Config.SilenceFrames = 2 in the model).         *)
(* turn     a turn is open: a TurnStarted (VadStart) has been reported     *)
(*          and no TurnStopped (VadStop) since.                            *)
(*                                                                         *)
(* Abort is the coordinator's stop: teardown for any reason, including the *)
(* detector's own failure (which fails the session and tears it down).     *)
(*                                                                         *)
(* Safety: a turn is open exactly while speech is detected (TurnIsSpeech); *)
(* silence is only counted in speech; an abort clears both, and nothing    *)
(* follows it.                                                             *)
(***************************************************************************)
EXTENDS Naturals

VARIABLES vad, silence, turn

vars == <<vad, silence, turn>>

Init ==
    /\ vad = "silent"
    /\ silence = 0
    /\ turn = FALSE

\* A frame the detector hears as speech: a turn starts, or goes on.
SpeechFrame ==
    /\ vad \in {"silent", "speech"}
    /\ vad' = "speech"
    /\ silence' = 0
    /\ turn' = TRUE

\* A frame the detector hears as silence: in speech, it counts; the second
\* in a row ends the turn. In silence it changes nothing.
QuietFrame ==
    /\ vad \in {"silent", "speech"}
    /\ IF vad = "speech" /\ silence + 1 >= 2
         THEN /\ vad' = "silent"
              /\ silence' = 0
              /\ turn' = FALSE
         ELSE /\ silence' = IF vad = "speech" THEN silence + 1 ELSE 0
              /\ UNCHANGED <<vad, turn>>

\* The coordinator is stopped (teardown): whatever was heard is dropped.
Abort ==
    /\ vad /= "terminated"
    /\ vad' = "terminated"
    /\ silence' = 0
    /\ UNCHANGED turn

\* Stopped: the detector's work is over (a trace may end here).
Done ==
    /\ vad = "terminated"
    /\ UNCHANGED vars

Next ==
    \/ SpeechFrame
    \/ QuietFrame
    \/ Abort
    \/ Done

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ vad \in {"silent", "speech", "terminated"}
    /\ silence \in 0..1
    /\ turn \in BOOLEAN

TurnIsSpeech == turn <=> (vad = "speech")

SilenceInSpeech == silence > 0 => vad = "speech"
=============================================================================
