package mutate

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Operator names the classic mutation operators [Generate] applies.
const (
	// OpBoundary is a conditional boundary: < ↔ <=, > ↔ >=.
	OpBoundary = "boundary"
	// OpNegate negates a comparison: == ↔ !=.
	OpNegate = "cond-negate"
	// OpIfNegate negates an if condition that is not a comparison:
	// if ok → if !(ok).
	OpIfNegate = "if-negate"
	// OpErrCheck removes an error check: if err != nil { ... } never runs.
	OpErrCheck = "err-check"
	// OpArith swaps + and - (and += and -=) on numbers.
	OpArith = "arith"
	// OpCallDrop drops a statement that is a call whose result is ignored
	// (f.Sync(), mu.Unlock(), close(ch)).
	OpCallDrop = "call-drop"
	// OpDeferDrop drops a defer statement.
	OpDeferDrop = "defer-drop"
	// OpIncDec swaps ++ and --.
	OpIncDec = "incdec"
	// OpBranchSwap swaps the branches of an if with a plain else:
	// if c { A } else { B } → if c { B } else { A }.
	OpBranchSwap = "branch-swap"
)

// Operators lists every operator, in the order they are documented.
//
// Dropping a lock's release is call-drop (mu.Unlock(), mu.RUnlock()) or
// defer-drop (defer mu.Unlock()); dropping the acquisition is call-drop.
var Operators = []string{OpBoundary, OpNegate, OpIfNegate, OpErrCheck, OpArith, OpCallDrop, OpDeferDrop, OpIncDec, OpBranchSwap}

// GenerateStats says what [Generate] did.
type GenerateStats struct {
	// Candidates counts the mutants the operators produced.
	Candidates int
	// Dropped counts those that did not type-check (a removed call that
	// left a variable unused, say): they are never run.
	Dropped int
}

// Generate loads the packages matching patterns (go list patterns such as
// ./impl/checkpoint, relative to the module root) and returns one mutant
// per application of an operator to a non-test, non-generated file, named
// op/FILE:LINE:COL/OPERATOR. Each is type-checked in memory with the
// mutation, and dropped if it does not type-check. A mutant's Old is the
// smallest run of whole lines around the mutation that occurs exactly once
// in its file, so it applies exactly once; its Tests are its package's
// whole test suite, and Package names the package (for coverage-based
// selection, [Campaign]).
func Generate(root string, patterns ...string) ([]Mutant, GenerateStats, error) {
	var st GenerateStats
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, st, fmt.Errorf("mutate: %w", err)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedTypesSizes | packages.NeedModule,
		Dir: absRoot,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, st, fmt.Errorf("mutate: loading %v: %w", patterns, err)
	}
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, fmt.Errorf("%s: %s", p.PkgPath, e.Msg))
		}
	}
	if len(errs) > 0 {
		return nil, st, fmt.Errorf("mutate: loading %v: %w", patterns, errors.Join(errs...))
	}
	var out []Mutant
	for _, p := range pkgs {
		ms, s, err := generatePackage(absRoot, p)
		if err != nil {
			return nil, st, err
		}
		st.Candidates += s.Candidates
		st.Dropped += s.Dropped
		out = append(out, ms...)
	}
	slices.SortStableFunc(out, func(a, b Mutant) int {
		return comparePos(a.File, a.Line, a.Col, a.Name, b.File, b.Line, b.Col, b.Name)
	})
	return out, st, nil
}

// site is one application of an operator: bytes [start, end) of a file
// become repl.
type site struct {
	op         string
	pos        token.Position
	start, end int
	repl       string
	// anchor, if valid, is where coverage must be looked up instead of
	// pos: the switch or select statement of a case expression, which
	// the go tool's coverage blocks leave out.
	anchor token.Position
}

func generatePackage(root string, p *packages.Package) ([]Mutant, GenerateStats, error) {
	var st GenerateStats
	if len(p.Syntax) == 0 {
		return nil, st, nil
	}
	dir := filepath.Dir(p.CompiledGoFiles[0])
	relDir, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(relDir, "..") {
		return nil, st, fmt.Errorf("mutate: package %s is outside the module root %s", p.PkgPath, root)
	}
	pkgArg := "./" + filepath.ToSlash(relDir)
	if relDir == "." {
		pkgArg = "."
	}
	imports := map[string]*types.Package{"unsafe": types.Unsafe}
	for _, imp := range p.Types.Imports() {
		imports[imp.Path()] = imp
	}
	goVersion := ""
	if p.Module != nil && p.Module.GoVersion != "" {
		goVersion = "go" + p.Module.GoVersion
	}
	var out []Mutant
	for i, f := range p.Syntax {
		path := p.CompiledGoFiles[i]
		if strings.HasSuffix(path, "_test.go") || ast.IsGenerated(f) {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, st, fmt.Errorf("mutate: %w", err)
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, s := range sites(p.Fset, p.TypesInfo, f, src) {
			st.Candidates++
			mutated := make([]byte, 0, len(src)+len(s.repl))
			mutated = append(append(append(mutated, src[:s.start]...), s.repl...), src[s.end:]...)
			if !typeChecks(p, i, path, mutated, imports, goVersion) {
				st.Dropped++
				continue
			}
			old, new := uniqueSpan(src, s.start, s.end, s.repl)
			m := Mutant{
				Name:     fmt.Sprintf("op/%s:%d:%d/%s", rel, s.pos.Line, s.pos.Column, s.op),
				Doc:      fmt.Sprintf("%s: %s → %s", s.op, oneLine(string(src[s.start:s.end])), oneLine(s.repl)),
				File:     rel,
				Old:      old,
				New:      new,
				Tests:    []Test{{Package: pkgArg}},
				Package:  pkgArg,
				Line:     s.pos.Line,
				Col:      s.pos.Column,
				Operator: s.op,
			}
			if s.anchor.IsValid() {
				m.CoverLine, m.CoverCol = s.anchor.Line, s.anchor.Column
			}
			out = append(out, m)
		}
	}
	return out, st, nil
}

// typeChecks type-checks p with file i replaced by src.
func typeChecks(p *packages.Package, i int, path string, src []byte, imports map[string]*types.Package, goVersion string) bool {
	f, err := parser.ParseFile(p.Fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	files := append([]*ast.File(nil), p.Syntax...)
	files[i] = f
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if t, ok := imports[path]; ok {
				return t, nil
			}
			return nil, fmt.Errorf("mutate: import %q not loaded", path)
		}),
		Sizes:     p.TypesSizes,
		GoVersion: goVersion,
	}
	_, err = conf.Check(p.PkgPath, p.Fset, files, nil)
	return err == nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// sites lists the operator applications in f, in source order.
func sites(fset *token.FileSet, info *types.Info, f *ast.File, src []byte) []site {
	var out []site
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	add := func(op string, at token.Pos, start, end token.Pos, repl string) {
		out = append(out, site{op: op, pos: fset.Position(at), start: off(start), end: off(end), repl: repl})
	}
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	numeric := func(e ast.Expr) bool {
		t := info.TypeOf(e)
		if t == nil {
			return false
		}
		b, ok := t.Underlying().(*types.Basic)
		return ok && b.Info()&types.IsNumeric != 0
	}
	errType := types.Universe.Lookup("error").Type()
	isErrCheck := func(c ast.Expr) bool {
		b, ok := ast.Unparen(c).(*ast.BinaryExpr)
		if !ok || b.Op != token.NEQ {
			return false
		}
		if id, ok := b.Y.(*ast.Ident); !ok || id.Name != "nil" {
			return false
		}
		t := info.TypeOf(b.X)
		return t != nil && types.Identical(t, errType)
	}
	comparison := func(c ast.Expr) bool {
		b, ok := ast.Unparen(c).(*ast.BinaryExpr)
		if !ok {
			return false
		}
		switch b.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return true
		}
		return false
	}
	stmtList := func(list []ast.Stmt) {
		for _, s := range list {
			switch s := s.(type) {
			case *ast.ExprStmt:
				if _, ok := ast.Unparen(s.X).(*ast.CallExpr); ok {
					add(OpCallDrop, s.Pos(), s.Pos(), s.End(), "")
				}
			case *ast.DeferStmt:
				add(OpDeferDrop, s.Pos(), s.Pos(), s.End(), "")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body == nil {
				return false
			}
		case *ast.GenDecl:
			// Constants and package-level variables: mutating them is
			// mostly noise (and often does not compile).
			return n.Tok != token.CONST
		case *ast.BlockStmt:
			stmtList(n.List)
		case *ast.CaseClause:
			stmtList(n.Body)
		case *ast.CommClause:
			stmtList(n.Body)
		case *ast.IfStmt:
			if els, ok := n.Else.(*ast.BlockStmt); ok {
				inner := func(b *ast.BlockStmt) string { return string(src[off(b.Lbrace)+1 : off(b.Rbrace)]) }
				add(OpBranchSwap, n.Pos(), n.Body.Lbrace, els.End(), "{"+inner(els)+"} else {"+inner(n.Body)+"}")
			}
			switch {
			case isErrCheck(n.Cond):
				repl := "false"
				if n.Init != nil { // keep the variable used
					repl = text(n.Cond) + " && false"
				}
				add(OpErrCheck, n.Cond.Pos(), n.Cond.Pos(), n.Cond.End(), repl)
			case !comparison(n.Cond):
				add(OpIfNegate, n.Cond.Pos(), n.Cond.Pos(), n.Cond.End(), "!("+text(n.Cond)+")")
			}
		case *ast.BinaryExpr:
			swap := map[token.Token]string{token.LSS: "<=", token.LEQ: "<", token.GTR: ">=", token.GEQ: ">",
				token.EQL: "!=", token.NEQ: "=="}
			if r, ok := swap[n.Op]; ok {
				op := OpBoundary
				if n.Op == token.EQL || n.Op == token.NEQ {
					op = OpNegate
				}
				add(op, n.OpPos, n.OpPos, n.OpPos+token.Pos(len(n.Op.String())), r)
			}
			if (n.Op == token.ADD || n.Op == token.SUB) && numeric(n) {
				r := map[token.Token]string{token.ADD: "-", token.SUB: "+"}[n.Op]
				add(OpArith, n.OpPos, n.OpPos, n.OpPos+1, r)
			}
		case *ast.AssignStmt:
			if (n.Tok == token.ADD_ASSIGN || n.Tok == token.SUB_ASSIGN) && len(n.Lhs) == 1 && numeric(n.Lhs[0]) {
				r := map[token.Token]string{token.ADD_ASSIGN: "-=", token.SUB_ASSIGN: "+="}[n.Tok]
				add(OpArith, n.TokPos, n.TokPos, n.TokPos+2, r)
			}
		case *ast.IncDecStmt:
			r := map[token.Token]string{token.INC: "--", token.DEC: "++"}[n.Tok]
			add(OpIncDec, n.TokPos, n.TokPos, n.TokPos+2, r)
		}
		return true
	})
	// A case clause's expressions lie between the switch's brace and the
	// clause's colon, in no coverage block: a mutant there is covered
	// when its switch (or select) statement is.
	type caseSpan struct {
		from, to int
		anchor   token.Pos
	}
	var spans []caseSpan
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.SwitchStmt:
			body = n.Body
		case *ast.TypeSwitchStmt:
			body = n.Body
		case *ast.SelectStmt:
			body = n.Body
		default:
			return true
		}
		for _, c := range body.List {
			switch c := c.(type) {
			case *ast.CaseClause:
				spans = append(spans, caseSpan{off(c.Pos()), off(c.Colon), n.Pos()})
			case *ast.CommClause:
				spans = append(spans, caseSpan{off(c.Pos()), off(c.Colon), n.Pos()})
			}
		}
		return true
	})
	for i := range out {
		for _, sp := range spans { // innermost last: Inspect visits outer switches first
			if out[i].start >= sp.from && out[i].start < sp.to {
				out[i].anchor = fset.Position(sp.anchor)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// uniqueSpan returns the whole lines around src[start:end] — as few as
// occur exactly once in src — and the same lines with [start, end)
// replaced by repl.
func uniqueSpan(src []byte, start, end int, repl string) (old, new string) {
	ls := bytes.LastIndexByte(src[:start], '\n') + 1
	le := end
	if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
		le = end + i + 1
	} else {
		le = len(src)
	}
	for bytes.Count(src, src[ls:le]) != 1 {
		switch {
		case ls > 0:
			ls = bytes.LastIndexByte(src[:ls-1], '\n') + 1
		case le < len(src):
			if i := bytes.IndexByte(src[le:], '\n'); i >= 0 {
				le += i + 1
			} else {
				le = len(src)
			}
		}
		if ls == 0 && le == len(src) {
			break
		}
	}
	return string(src[ls:le]), string(src[ls:start]) + repl + string(src[end:le])
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(nothing)"
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
