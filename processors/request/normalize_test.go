package request

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func nzCall(id, name string) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: map[string]any{"q": name + id}}}
}

func nzResp(id, name string, v string) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"result": v}}}
}

func nzSynth(id, name string) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"error": syntheticError}}}
}

func nzText(s string) *genai.Part { return &genai.Part{Text: s} }

func nzModel(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: parts}
}

func nzUser(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// snapshot deep-copies contents through JSON, to detect mutation of the originals.
func nzSnapshot(t testing.TB, cs []*genai.Content) string {
	t.Helper()
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []*genai.Content
		want []*genai.Content
		rep  NormalizeReport
	}{
		{
			name: "nil request contents",
			in:   nil,
			want: nil,
		},
		{
			name: "text only history is untouched",
			in:   []*genai.Content{nzUser(nzText("hi")), nzModel(nzText("hello")), nzUser(nzText("bye"))},
			want: []*genai.Content{nzUser(nzText("hi")), nzModel(nzText("hello")), nzUser(nzText("bye"))},
		},
		{
			name: "valid pair is untouched",
			in:   []*genai.Content{nzUser(nzText("q")), nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a.txt")), nzModel(nzText("done"))},
			want: []*genai.Content{nzUser(nzText("q")), nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a.txt")), nzModel(nzText("done"))},
		},
		{
			name: "call at the very end of history",
			in:   []*genai.Content{nzUser(nzText("q")), nzModel(nzText("let me look"), nzCall("c1", "ls"))},
			want: []*genai.Content{nzUser(nzText("q")), nzModel(nzText("let me look"), nzCall("c1", "ls")), nzUser(nzSynth("c1", "ls"))},
			rep:  NormalizeReport{SyntheticResponses: 1, ContentsInserted: 1, SyntheticNames: []string{"ls"}},
		},
		{
			name: "missing response followed by a user message",
			in:   []*genai.Content{nzModel(nzCall("", "build")), nzUser(nzText("why did you stop?"))},
			want: []*genai.Content{nzModel(nzCall("", "build")), nzUser(nzSynth("", "build")), nzUser(nzText("why did you stop?"))},
			rep:  NormalizeReport{SyntheticResponses: 1, ContentsInserted: 1, SyntheticNames: []string{"build"}},
		},
		{
			name: "one of two parallel responses missing",
			in:   []*genai.Content{nzModel(nzCall("a", "x"), nzCall("b", "y")), nzUser(nzResp("a", "x", "1"))},
			want: []*genai.Content{nzModel(nzCall("a", "x"), nzCall("b", "y")), nzUser(nzResp("a", "x", "1"), nzSynth("b", "y"))},
			rep:  NormalizeReport{SyntheticResponses: 1, SyntheticNames: []string{"y"}},
		},
		{
			name: "orphan response content is dropped",
			in:   []*genai.Content{nzUser(nzText("q")), nzUser(nzResp("zz", "ghost", "boo")), nzModel(nzText("ok"))},
			want: []*genai.Content{nzUser(nzText("q")), nzModel(nzText("ok"))},
			rep:  NormalizeReport{OrphansRemoved: 1, ContentsDropped: 1, OrphanNames: []string{"ghost"}},
		},
		{
			name: "orphan next to text keeps the text",
			in:   []*genai.Content{nzModel(nzText("hm")), nzUser(nzText("note"), nzResp("", "ghost", "boo"))},
			want: []*genai.Content{nzModel(nzText("hm")), nzUser(nzText("note"))},
			rep:  NormalizeReport{OrphansRemoved: 1, OrphanNames: []string{"ghost"}},
		},
		{
			name: "orphan inside a valid response content",
			in:   []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a"), nzResp("c9", "rm", "gone"))},
			want: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a"))},
			rep:  NormalizeReport{OrphansRemoved: 1, OrphanNames: []string{"rm"}},
		},
		{
			name: "parallel calls answered out of order",
			in: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b"), nzCall("3", "c")),
				nzUser(nzResp("3", "c", "C"), nzResp("1", "a", "A"), nzResp("2", "b", "B")),
			},
			want: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b"), nzCall("3", "c")),
				nzUser(nzResp("1", "a", "A"), nzResp("2", "b", "B"), nzResp("3", "c", "C")),
			},
			rep: NormalizeReport{Reordered: 1},
		},
		{
			name: "blank ids, duplicate names: k-th response named X answers k-th call named X",
			in: []*genai.Content{
				nzModel(nzCall("", "read"), nzCall("", "write"), nzCall("", "read")),
				nzUser(nzResp("", "write", "W"), nzResp("", "read", "R1"), nzResp("", "read", "R2")),
			},
			want: []*genai.Content{
				nzModel(nzCall("", "read"), nzCall("", "write"), nzCall("", "read")),
				nzUser(nzResp("", "read", "R1"), nzResp("", "write", "W"), nzResp("", "read", "R2")),
			},
			rep: NormalizeReport{Reordered: 1},
		},
		{
			name: "duplicate response for one call",
			in:   []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "first"), nzResp("c1", "ls", "again"))},
			want: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "first"))},
			rep:  NormalizeReport{OrphansRemoved: 1, OrphanNames: []string{"ls"}},
		},
		{
			name: "id mismatch: synthetic for the call, orphan removed",
			in:   []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c2", "ls", "x"))},
			want: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzSynth("c1", "ls"))},
			rep:  NormalizeReport{SyntheticResponses: 1, OrphansRemoved: 1, SyntheticNames: []string{"ls"}, OrphanNames: []string{"ls"}},
		},
		{
			name: "nil contents and nil parts",
			in:   []*genai.Content{nil, nzModel(nzCall("c1", "ls")), nil, nzUser(nil, nzResp("c1", "ls", "a"), nil), nil},
			want: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a"))},
			rep:  NormalizeReport{ContentsDropped: 3},
		},
		{
			name: "responses inside a call content are orphans",
			in:   []*genai.Content{nzModel(nzResp("c0", "old", "x"), nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a"))},
			want: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzResp("c1", "ls", "a"))},
			rep:  NormalizeReport{OrphansRemoved: 1, OrphanNames: []string{"old"}},
		},
		{
			name: "a malformed part with both a call and a response keeps the call",
			in: []*genai.Content{
				nzModel(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "ls"}, FunctionResponse: &genai.FunctionResponse{ID: "c0", Name: "old"}}),
				nzUser(&genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "ls"}}),
			},
			want: []*genai.Content{
				nzModel(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "ls"}}),
				nzUser(&genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "ls"}}),
			},
			rep: NormalizeReport{OrphansRemoved: 1, OrphanNames: []string{"old"}},
		},
		{
			name: "text before valid responses is kept in place",
			in:   []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzText("here:"), nzResp("c1", "ls", "a"))},
			want: []*genai.Content{nzModel(nzCall("c1", "ls")), nzUser(nzText("here:"), nzResp("c1", "ls", "a"))},
		},
		{
			name: "two call contents in a row",
			in: []*genai.Content{
				nzModel(nzCall("", "a")), nzModel(nzCall("", "b")), nzUser(nzResp("", "b", "B")),
			},
			want: []*genai.Content{
				nzModel(nzCall("", "a")), nzUser(nzSynth("", "a")), nzModel(nzCall("", "b")), nzUser(nzResp("", "b", "B")),
			},
			rep: NormalizeReport{SyntheticResponses: 1, ContentsInserted: 1, SyntheticNames: []string{"a"}},
		},
		{
			name: "parallel calls answered in two user contents",
			in: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b")), nzUser(nzResp("1", "a", "A")), nzUser(nzResp("2", "b", "B")), nzModel(nzText("done")),
			},
			want: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b")), nzUser(nzResp("1", "a", "A"), nzResp("2", "b", "B")), nzModel(nzText("done")),
			},
			rep: NormalizeReport{ContentsMerged: 1},
		},
		{
			name: "parallel calls answered one content each, in reverse order",
			in: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b")), nzUser(nzResp("2", "b", "B")), nzUser(nzResp("1", "a", "A")),
			},
			want: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b")), nzUser(nzResp("1", "a", "A"), nzResp("2", "b", "B")),
			},
			rep: NormalizeReport{ContentsMerged: 1, Reordered: 1},
		},
		{
			name: "blank ids: split answers pair by name and position over the contents",
			in: []*genai.Content{
				nzModel(nzCall("", "read"), nzCall("", "write"), nzCall("", "read")),
				nzUser(nzResp("", "read", "R1")), nzUser(nzResp("", "write", "W")), nzUser(nzResp("", "read", "R2")),
			},
			want: []*genai.Content{
				nzModel(nzCall("", "read"), nzCall("", "write"), nzCall("", "read")),
				nzUser(nzResp("", "read", "R1"), nzResp("", "write", "W"), nzResp("", "read", "R2")),
			},
			rep: NormalizeReport{ContentsMerged: 2},
		},
		{
			name: "split answers with text, an orphan and a missing response",
			in: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b"), nzCall("3", "c")),
				nzUser(nzResp("3", "c", "C")), nzUser(nzText("note"), nzResp("9", "ghost", "G"), nil), nzUser(nzResp("1", "a", "A")),
				nzUser(nzText("next")),
			},
			want: []*genai.Content{
				nzModel(nzCall("1", "a"), nzCall("2", "b"), nzCall("3", "c")),
				nzUser(nzResp("1", "a", "A"), nzSynth("2", "b"), nzResp("3", "c", "C"), nzText("note")),
				nzUser(nzText("next")),
			},
			rep: NormalizeReport{ContentsMerged: 2, Reordered: 1, SyntheticResponses: 1, OrphansRemoved: 1,
				SyntheticNames: []string{"b"}, OrphanNames: []string{"ghost"}},
		},
		{
			name: "a duplicate answer in the next content is an orphan",
			in:   []*genai.Content{nzModel(nzCall("1", "a")), nzUser(nzResp("1", "a", "first")), nzUser(nzResp("1", "a", "again"))},
			want: []*genai.Content{nzModel(nzCall("1", "a")), nzUser(nzResp("1", "a", "first"))},
			rep:  NormalizeReport{ContentsMerged: 1, OrphansRemoved: 1, OrphanNames: []string{"a"}},
		},
		{
			name: "answers split over contents of two call turns stay with their turn",
			in: []*genai.Content{
				nzModel(nzCall("", "a"), nzCall("", "b")), nzUser(nzResp("", "b", "B")), nzUser(nzResp("", "a", "A")),
				nzModel(nzCall("", "a")), nzUser(nzResp("", "a", "A2")),
			},
			want: []*genai.Content{
				nzModel(nzCall("", "a"), nzCall("", "b")), nzUser(nzResp("", "a", "A"), nzResp("", "b", "B")),
				nzModel(nzCall("", "a")), nzUser(nzResp("", "a", "A2")),
			},
			rep: NormalizeReport{ContentsMerged: 1, Reordered: 1},
		},
		{
			name: "response separated from its call by text",
			in: []*genai.Content{
				nzModel(nzCall("", "a")), nzUser(nzText("hurry")), nzUser(nzResp("", "a", "A")),
			},
			want: []*genai.Content{
				nzModel(nzCall("", "a")), nzUser(nzSynth("", "a")), nzUser(nzText("hurry")),
			},
			rep: NormalizeReport{SyntheticResponses: 1, ContentsInserted: 1, OrphansRemoved: 1, ContentsDropped: 1,
				SyntheticNames: []string{"a"}, OrphanNames: []string{"a"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &LLMRequest{Contents: tc.in}
			before := nzSnapshot(t, tc.in)
			rep := Normalize(req)
			if diff := cmp.Diff(tc.want, req.Contents); diff != "" {
				t.Errorf("contents mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.rep, rep); diff != "" {
				t.Errorf("report mismatch (-want +got):\n%s", diff)
			}
			if changed(rep) != !cmp.Equal(tc.in, req.Contents) && rep.ContentsDropped == 0 {
				t.Errorf("changed(rep) = %v", changed(rep))
			}
			if after := nzSnapshot(t, tc.in); after != before {
				t.Errorf("input contents were mutated:\nbefore %s\nafter  %s", before, after)
			}
			if err := nzValidPairs(req.Contents); err != nil {
				t.Errorf("output not valid: %v", err)
			}
			again := nzSnapshot(t, req.Contents)
			rep2 := Normalize(req)
			if changed(rep2) || nzSnapshot(t, req.Contents) != again {
				t.Errorf("second Normalize changed something: %+v", rep2)
			}
		})
	}
}

func TestNormalizeNilRequest(t *testing.T) {
	if rep := Normalize(nil); changed(rep) {
		t.Errorf("Normalize(nil) = %+v", rep)
	}
}

// changed reports whether a Normalize report says the request was modified.
func changed(r NormalizeReport) bool {
	return r.SyntheticResponses > 0 || r.OrphansRemoved > 0 || r.Reordered > 0 ||
		r.ContentsInserted > 0 || r.ContentsDropped > 0 || r.ContentsMerged > 0
}
