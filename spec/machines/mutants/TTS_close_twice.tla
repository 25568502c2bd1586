-------------------------------- MODULE TTS_close_twice --------------------------------
(***************************************************************************)
(* MUTANT close-twice: Close closes done again: not idempotent *)
(* M5, the TTS pipeline one response owns (impl/session/tts.go, the        *)
(* response coordinator's worker in coord.go), in isolation.               *)
(*                                                                         *)
(* resp    the response as its coordinator sees it: "live", or ended:      *)
(*         "complete" (its pipeline returned and the coordinator stepped   *)
(*         that end: the audio still buffered is the end of the response   *)
(*         and is delivered), "cancelled" (CancelResponse, barge-in, a     *)
(*         newer response, or teardown) or "finished" (FinishResponse).    *)
(* worker  the pipeline goroutine: "running", "returned" (run returned,    *)
(*         its exit not yet received), "joined" (the coordinator received  *)
(*         its exit: it is no longer live).                                *)
(* stream  the audio channel: "open", "closed" by the pipeline when it     *)
(*         returns (buffered chunks stay readable) or "cut" by the         *)
(*         coordinator when it ends the response (buffered chunks are      *)
(*         discarded, later sends refused).                                *)
(* buf     chunks buffered on the channel (capacity 1).                    *)
(* sent    chunks the synthesizer sent (at most 2: a bounded response).    *)
(* dones   times the worker's done channel was closed (end()).            *)
(* joins   times the coordinator received the worker's exit.               *)
(* late    a chunk was delivered after the response was cancelled or       *)
(*         finished (a history variable for NoAudioAfterEnd).              *)
(*                                                                         *)
(* Safety: close is idempotent (CloseOnce) and joins the worker once       *)
(* (JoinOnce); no audio chunk is delivered after the response is           *)
(* cancelled or finished (NoAudioAfterEnd).                                *)
(***************************************************************************)
EXTENDS Naturals

VARIABLES resp, worker, stream, buf, sent, dones, joins, late

vars == <<resp, worker, stream, buf, sent, dones, joins, late>>

Ended == {"cancelled", "finished"}

Init ==
    /\ resp = "live"
    /\ worker = "running"
    /\ stream = "open"
    /\ buf = 0
    /\ sent = 0
    /\ dones = 0
    /\ joins = 0
    /\ late = FALSE

\* The synthesizer sends a chunk: only on an open stream with room.
Send ==
    /\ worker = "running"
    /\ stream = "open"
    /\ buf < 1
    /\ sent < 2
    /\ buf' = buf + 1
    /\ sent' = sent + 1
    /\ UNCHANGED <<resp, worker, stream, dones, joins, late>>

\* The reader (the transport) takes a chunk off the stream.
Play ==
    /\ buf > 0
    /\ buf' = buf - 1
    /\ late' = (late \/ resp \in Ended)
    /\ UNCHANGED <<resp, worker, stream, sent, dones, joins>>

\* The pipeline returns (done, failed, or its sends refused after a cut)
\* and closes the stream unless it was cut: what is buffered stays.
Return ==
    /\ worker = "running"
    /\ worker' = "returned"
    /\ stream' = IF stream = "open" THEN "closed" ELSE stream
    /\ UNCHANGED <<resp, buf, sent, dones, joins, late>>

\* The coordinator ends the live response (halt with cut, then end):
\* the stream is cut, its buffered chunks discarded, done closed.
\* Cancel: CancelResponse, barge-in, a newer response superseding it.
Cancel ==
    /\ resp = "live"
    /\ resp' = "cancelled"
    /\ stream' = "cut"
    /\ buf' = 0
    /\ dones' = 1
    /\ UNCHANGED <<worker, sent, joins, late>>

\* Finish: FinishResponse, the same ending.
Finish ==
    /\ resp = "live"
    /\ resp' = "finished"
    /\ stream' = "cut"
    /\ buf' = 0
    /\ dones' = 1
    /\ UNCHANGED <<worker, sent, joins, late>>

\* The coordinator steps the exit of the live response's pipeline: the
\* response is complete, its worker joined and done closed; the stream
\* (closed by the pipeline) keeps its last chunks for the reader.
Complete ==
    /\ resp = "live"
    /\ worker = "returned"
    /\ resp' = "complete"
    /\ worker' = "joined"
    /\ dones' = 1
    /\ joins' = joins + 1
    /\ UNCHANGED <<stream, buf, sent, late>>

\* The coordinator receives the exit of an ended response's pipeline.
Reap ==
    /\ resp \in Ended
    /\ worker = "returned"
    /\ worker' = "joined"
    /\ joins' = joins + 1
    /\ UNCHANGED <<resp, stream, buf, sent, dones, late>>

\* Teardown's shutdown ends every live worker (end(ErrClosed)), ended or
\* not: close is idempotent, so on an ended response it changes nothing.
Close ==
    /\ worker /= "joined"
    /\ resp' = IF resp = "live" THEN "cancelled" ELSE resp
    /\ stream' = IF resp = "live" THEN "cut" ELSE stream
    /\ buf' = IF resp = "live" THEN 0 ELSE buf
    /\ dones' = IF dones < 2 THEN dones + 1 ELSE dones
    /\ UNCHANGED <<worker, sent, joins, late>>

\* The response has ended, its worker is joined and no chunk is left to
\* read: the pipeline's work is over (a trace may end here).
Done ==
    /\ resp /= "live"
    /\ worker = "joined"
    /\ buf = 0
    /\ UNCHANGED vars

Next ==
    \/ Send
    \/ Play
    \/ Return
    \/ Cancel
    \/ Finish
    \/ Complete
    \/ Reap
    \/ Close
    \/ Done

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ resp \in {"live", "complete"} \cup Ended
    /\ worker \in {"running", "returned", "joined"}
    /\ stream \in {"open", "closed", "cut"}
    /\ buf \in 0..1
    /\ sent \in 0..2
    /\ dones \in 0..2
    /\ joins \in 0..2
    /\ late \in BOOLEAN

NoAudioAfterEnd == ~late

CloseOnce == dones <= 1

JoinOnce == joins <= 1
=============================================================================
