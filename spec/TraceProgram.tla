---------------------------- MODULE TraceProgram ----------------------------
(***************************************************************************)
(* Trace validation of Program.tla with TLC, in the style of etcd-raft's   *)
(* tla/Traceetcdraft.tla: TLC reads one NDJSON trace (docs/trace-format.md) *)
(* through the CommunityModules' ndJsonDeserialize and searches for a      *)
(* behaviour of Program whose steps are the trace's events, in order.      *)
(*                                                                         *)
(* One instance per file, as etcd-raft validates one file at a time; the   *)
(* path comes from the environment variable TRACE and must be absolute     *)
(* (Json resolves relative paths against the JVM's working directory):     *)
(*                                                                         *)
(*   TRACE=/abs/run.ndjson java -XX:+UseParallelGC \                       *)
(*     -cp tla2tools.jar:CommunityModules-deps.jar tlc2.TLC \              *)
(*     -workers 1 -noGenerateSpecTE spec/TraceProgram.tla                  *)
(*                                                                         *)
(* l counts the events consumed.  The initial states are Program's, with   *)
(* l = 0; each TraceNext step consumes the next event: the Init event as a *)
(* step that changes nothing, every other event as one step of the action  *)
(* it names (a stutter event as a step that changes no variable).  The     *)
(* state after the step must agree with every variable the event carries. *)
(* A composite step (part begin/step/end) is one Program step taken at its *)
(* "end" event, checked against the parts' merged state (later parts win). *)
(* An event out of order (Init not first, or again; a composite part       *)
(* without its begin; another action inside an open composite) matches    *)
(* nothing, so it is a violation, as in tracecheck.  A partial last line   *)
(* is the script's business: it drops it before TLC reads the file.        *)
(*                                                                         *)
(* Verdicts, as formal-verification/tlc-traces.sh maps them to tracecheck's *)
(*   TLC exit 0                                  -> valid                  *)
(*   exit 12, "Invariant TraceComplete"          -> incomplete: the whole  *)
(*            trace matched, but it ends in a non-terminal phase or inside *)
(*            a composite step                                             *)
(*   exit 10, "Postcondition TraceMatched"       -> violation: no behaviour *)
(*            of Program consumes the whole trace; TLC prints the first    *)
(*            event none matched                                           *)
(*   exit 12/13 naming one of Program's checks   -> violation              *)
(*   exit 10, "Evaluating assumption"            -> input error: the file  *)
(*            is not a well-formed one-instance Program trace              *)
(*   anything else                               -> error (TLC failed)     *)
(* Program's actions are deterministic once their name is known, so no     *)
(* dead branch of the search hides a matching one: the first unmatched     *)
(* event is the one TLC prints.                                            *)
(***************************************************************************)
EXTENDS Naturals, Sequences, Json, IOUtils, TLC

\* TLCGet("stats").diameter is the length of the longest matched prefix only
\* under breadth-first search.
ASSUME TLCGet("config").mode = "bfs"

TraceFile == IF "TRACE" \in DOMAIN IOEnv THEN IOEnv.TRACE ELSE "trace.ndjson"

TraceLog == TLCEval(ndJsonDeserialize(TraceFile))

VARIABLES phase, verified, published, l

P == INSTANCE Program

vars == <<phase, verified, published>>
traceVars == <<phase, verified, published, l>>

Vars == {"phase", "verified", "published"}

ActionNames == {"ExecutePython", "ProgramSucceeds", "ExecutionFails",
                "ReloadAndVerify", "SaveOrVerificationFails", "Interrupt",
                "AtomicPublication", "PublicationFails",
                "InterruptBeforePublication", "Terminated"}

-----------------------------------------------------------------------------
(* The trace's events.                                                     *)

Has(r, f) == f \in DOMAIN r

IsStutter(e) == Has(e, "stutter") /\ e.stutter = TRUE

PartOf(e) == IF Has(e, "part") THEN e.part ELSE ""

(***************************************************************************)
(* Input checks: what tracecheck reports as an input error.  TLC stops     *)
(* with exit 10 and prints the offending event's number and the reason.    *)
(***************************************************************************)
WellTyped(s) ==
    /\ Has(s, "phase") => s.phase \in STRING
    /\ Has(s, "verified") => s.verified \in BOOLEAN
    /\ Has(s, "published") => s.published \in BOOLEAN

InputError(i, why) == Assert(FALSE, <<"input error: event", i, why, TraceLog[i]>>)

Check(i, ok, why) == ok \/ InputError(i, why)

ASSUME Len(TraceLog) > 0 \/ Assert(FALSE, "input error: empty trace")

ASSUME \A i \in 1..Len(TraceLog) :
    LET e == TraceLog[i] IN
    /\ Check(i, \A f \in {"v", "instance", "seq", "action", "state"} : Has(e, f),
             "missing one of v, instance, seq, action, state")
    /\ Check(i, e.v = 1, "unsupported format version")
    /\ Check(i, e.seq \in Nat, "seq is not a natural number")
    /\ Check(i, e.instance = TraceLog[1].instance,
             "a second instance: TraceProgram checks one instance a file")
    /\ Check(i, i > 1 => e.seq > TraceLog[i - 1].seq, "seq does not increase")
    /\ Check(i, DOMAIN e.state \subseteq Vars, "unknown variable")
    /\ Check(i, WellTyped(e.state), "a value of the wrong type")
    /\ Check(i, Has(e, "stutter") => e.stutter \in BOOLEAN, "stutter is not a boolean")
    /\ Check(i, PartOf(e) \in {"", "begin", "step", "end"}, "unknown part")
    /\ Check(i, e.action = "Init" => PartOf(e) = "", "Init cannot be part of a composite step")
    /\ Check(i, ~IsStutter(e) => e.action \in ActionNames \cup {"Init"}, "unknown action")

\* The part event a part or stutter event at i belongs to: the nearest part
\* event at or before i (0 if none).
RECURSIVE LastPart(_)
LastPart(i) ==
    IF i = 0 THEN 0 ELSE IF PartOf(TraceLog[i]) # "" THEN i ELSE LastPart(i - 1)

\* Inside a composite after event i: its last part event is begin or step.
InComposite(i) ==
    LET k == LastPart(i) IN k > 0 /\ PartOf(TraceLog[k]) \in {"begin", "step"}

\* Event i may come where it is (otherwise the trace is a violation there,
\* as tracecheck reports it): Init first and only first; a composite's step
\* or end continues a begin of the same action; a begin does not start
\* inside another composite; inside one, only its parts and stutter events.
InOrder(i) ==
    LET e == TraceLog[i]
        k == LastPart(i - 1)
    IN
    /\ (i = 1) = (e.action = "Init")
    /\ PartOf(e) \in {"step", "end"} => InComposite(i - 1) /\ TraceLog[k].action = e.action
    /\ PartOf(e) = "begin" => ~InComposite(i - 1)
    /\ PartOf(e) = "" /\ InComposite(i - 1) => IsStutter(e)

\* The state a composite ending at i carries: its parts' states merged,
\* later parts winning; stutter events inside it add nothing.
Merge(r, s) == [f \in DOMAIN r \cup DOMAIN s |-> IF f \in DOMAIN s THEN s[f] ELSE r[f]]

RECURSIVE Merged(_)
Merged(i) ==
    LET e == TraceLog[i] IN
    CASE PartOf(e) = "begin" -> e.state
      [] PartOf(e) = ""      -> Merged(i - 1)
      [] OTHER               -> Merge(Merged(i - 1), e.state)

-----------------------------------------------------------------------------
(* Stepping through the trace.                                             *)

Step(a) ==
    CASE a = "ExecutePython"              -> P!ExecutePython
      [] a = "ProgramSucceeds"            -> P!ProgramSucceeds
      [] a = "ExecutionFails"             -> P!ExecutionFails
      [] a = "ReloadAndVerify"            -> P!ReloadAndVerify
      [] a = "SaveOrVerificationFails"    -> P!SaveOrVerificationFails
      [] a = "Interrupt"                  -> P!Interrupt
      [] a = "AtomicPublication"          -> P!AtomicPublication
      [] a = "PublicationFails"           -> P!PublicationFails
      [] a = "InterruptBeforePublication" -> P!InterruptBeforePublication
      [] a = "Terminated"                 -> P!Terminated

\* The variables after the step agree with those the trace gives.
MatchesNext(s) ==
    /\ Has(s, "phase")     => phase' = s.phase
    /\ Has(s, "verified")  => verified' = s.verified
    /\ Has(s, "published") => published' = s.published

\* Consume event i.
Consume(i) ==
    LET e == TraceLog[i] IN
    CASE e.action = "Init"                -> UNCHANGED vars /\ MatchesNext(e.state)
      [] IsStutter(e)                     -> UNCHANGED vars /\ MatchesNext(e.state)
      [] PartOf(e) \in {"begin", "step"}  -> UNCHANGED vars
      [] PartOf(e) = "end"                -> Step(e.action) /\ MatchesNext(Merged(i))
      [] OTHER                            -> Step(e.action) /\ MatchesNext(e.state)

TraceInit ==
    /\ l = 0
    /\ P!Init

TraceNext ==
    /\ l < Len(TraceLog)
    /\ l' = l + 1
    /\ InOrder(l + 1)
    /\ Consume(l + 1)

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

-----------------------------------------------------------------------------
(* What TLC checks.                                                        *)

\* Every behaviour of TraceSpec is one of Program's.
ProgramSpec == P!Spec

\* Program.cfg's invariants and action property, checked at every step.
TypeOK == P!TypeOK
PublishedOnlyVerified == P!PublishedOnlyVerified
FailedNeverPublished == P!FailedNeverPublished
PublicationIsTerminal == P!PublicationIsTerminal

\* Incomplete: the whole trace matched, but the run did not end: its phase
\* is not terminal, or the trace stops inside a composite step.
TraceComplete ==
    l = Len(TraceLog) => phase \in P!TerminalPhases /\ ~InComposite(l)

\* Whether some behaviour consumed the whole trace.  Under breadth-first
\* search the diameter is the number of distinct l values reached, so it is
\* Len(TraceLog) + 1 exactly when the last event was matched; otherwise
\* TraceLog[diameter] is the first event no behaviour matched.
TraceMatched ==
    LET d == TLCGet("stats").diameter IN
    \/ d = Len(TraceLog) + 1
    \/ PrintT(<<"violation: no behaviour of Program matches event", d, TraceLog[d]>>) /\ FALSE

=============================================================================
