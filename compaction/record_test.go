package compaction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/internal/fixtures"
)

// shellAndServiceEvents is a long session of both classes and of a structured coding agent:
// what the exactness and bound tests replay. Each round renames the repository's package and
// the service's ids, so a long session names more files and values than the record holds.
func shellAndServiceEvents(rounds int) [][]Event {
	task, steps := fixtures.ShellSession()
	user, calls := fixtures.ServiceSession()
	var out [][]Event // invocations
	for r := range rounds {
		inv := fmt.Sprintf("r%d", r)
		rename := strings.NewReplacer("tinyorm", fmt.Sprintf("orm%02d", r%25), "HAT", fmt.Sprintf("H%02d", r%40), "credit_card_", fmt.Sprintf("credit_card_%d", r%30))
		switch r % 3 {
		case 0:
			var renamed []fixtures.ShellStep
			for _, s := range steps[(r*7)%len(steps):] {
				renamed = append(renamed, fixtures.ShellStep{Command: rename.Replace(s.Command), RC: s.RC, Output: rename.Replace(s.Output)})
			}
			out = append(out, shellEvents(inv, task, renamed))
		case 1:
			var renamed []fixtures.ServiceCall
			for _, c := range calls {
				b, _ := json.Marshal(c.Args)
				var args map[string]any
				_ = json.Unmarshal([]byte(rename.Replace(string(b))), &args)
				renamed = append(renamed, fixtures.ServiceCall{Name: c.Name, Args: args, Result: rename.Replace(c.Result)})
			}
			var evs []Event
			for _, e := range serviceEvents(user, renamed) {
				e.ID, e.InvocationID = inv+e.ID, inv
				evs = append(evs, e)
			}
			out = append(out, evs)
		default:
			out = append(out, codingInvocation(r))
		}
	}
	return out
}

// The record continued through deltas is the record built from the events, byte for byte:
// whatever the split of the events into compactions (at step boundaries, as compaction splits
// them), with every delta and every eighth ledger stored and read back as JSON.
func TestRecordDeltasExact(t *testing.T) {
	var events []Event
	var cuts []int // event indexes a compaction may end at: between steps
	for _, inv := range shellAndServiceEvents(30) {
		for _, e := range inv {
			events = append(events, e)
			if !hasCall(e) {
				cuts = append(cuts, len(events))
			}
		}
	}
	whole := &Ledger{}
	whole.add(events, 30)
	want, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	if whole.tools.Step < 300 || len(whole.tools.Files) == 0 || len(whole.tools.Values) == 0 || len(whole.tools.Commands) == 0 || len(whole.tools.Requests) == 0 {
		t.Fatalf("the session fills too little of the record: %d steps, %d files, %d values", whole.tools.Step, len(whole.tools.Files), len(whole.tools.Values))
	}
	// The record is unexported, and stored all the same: a ledger read back is the one stored.
	for _, key := range []string{`"step":`, `"files":`, `"commands":`, `"values":`, `"requests":`} {
		if !bytes.Contains(want, []byte(key)) {
			t.Errorf("the stored ledger lacks %s", key)
		}
	}
	if back, _ := json.Marshal(roundTrip(t, whole)); !bytes.Equal(back, want) {
		t.Fatalf("a ledger read back differs from the one stored:\n%s", cmp.Diff(string(want), string(back)))
	}
	rng := rand.New(rand.NewPCG(28, 1))
	for trial := range 20 {
		l := &Ledger{}
		from, markers := 0, 0
		for from < len(events) {
			to := cuts[rng.IntN(len(cuts))]
			if to <= from {
				to = len(events)
			}
			d := roundTrip(t, NewLedgerDelta(events[from:to], 0))
			if markers%8 == 0 { // every 8th ledger is stored whole
				l = roundTrip(t, l)
			}
			l.apply(d)
			from, markers = to, markers+1
		}
		l.Invocations = 30
		got, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("trial %d (%d deltas): the ledger continued through deltas differs from the one built whole:\n%s", trial, markers, cmp.Diff(string(want), string(got)))
		}
		if a, b := l.render(renderLimits{bytes: 8 << 10}, false), whole.render(renderLimits{bytes: 8 << 10}, false); a != b {
			t.Fatalf("trial %d: renders differ:\n%s", trial, cmp.Diff(b, a))
		}
	}
}

// A ledger and a delta encode and decode as encoding/json does a struct of their fields, as
// they did while the record of the tools' work was exported: an encoder that leaves <, > and &
// as they are (SetEscapeHTML(false), as zap's JSON logs do) leaves them so in the record too,
// JSON null leaves a value as it is, and an object sets the fields it holds, no others.
func TestLedgerJSONAsStruct(t *testing.T) {
	var l *Ledger
	var d *LedgerDelta
	for _, inv := range shellAndServiceEvents(4) {
		d = NewLedgerDelta(inv, 1)
		l = l.Apply(d)
	}
	withDelta := fullMarker()
	withDelta.Ledger, withDelta.LedgerDelta, withDelta.LedgerFrom = nil, d, 1767225000
	withLedger := fullMarker()
	withLedger.Ledger = l
	unescape := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
	for name, v := range map[string]any{"ledger": l, "ledger value": *l, "delta": d, "deltas": []LedgerDelta{*d, {}},
		"marker with a ledger": withLedger, "marker with a delta": withDelta} {
		escaped, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(escaped, []byte(`\u0026\u0026`)) {
			t.Fatalf("%s: the session ran no command with && to encode", name)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSuffix(b.String(), "\n"), unescape.Replace(string(escaped)); got != want {
			t.Errorf("%s encoded without HTML escapes differs from its encoding with the escapes undone:\n%s", name, cmp.Diff(want, got))
		}
	}

	encode := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := l.clone()
	got := l.clone()
	if err := json.Unmarshal([]byte(`null`), got); err != nil || encode(got) != encode(want) {
		t.Errorf("null decoded into a ledger changed it (err %v):\n%s", err, cmp.Diff(encode(want), encode(got)))
	}
	want.Goal, want.tools.Step = "Another goal.", 99
	if err := json.Unmarshal([]byte(`{"goal":"Another goal.","step":99}`), got); err != nil || encode(got) != encode(want) {
		t.Errorf("an object decoded into a ledger set other fields than it holds (err %v):\n%s", err, cmp.Diff(encode(want), encode(got)))
	}
	wantD, gotD := *d, *d
	if err := json.Unmarshal([]byte(`null`), &gotD); err != nil || encode(gotD) != encode(wantD) {
		t.Errorf("null decoded into a delta changed it (err %v):\n%s", err, cmp.Diff(encode(wantD), encode(gotD)))
	}
	wantD.Events = 99
	if err := json.Unmarshal([]byte(`{"events":99}`), &gotD); err != nil || encode(gotD) != encode(wantD) {
		t.Errorf("an object decoded into a delta set other fields than it holds (err %v):\n%s", err, cmp.Diff(encode(wantD), encode(gotD)))
	}
}

func hasCall(e Event) bool {
	if e.Content == nil {
		return false
	}
	for _, p := range e.Content.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}

func roundTrip[T any](t testing.TB, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Long sessions keep the record within its bounds; what goes past a bound is counted, so the
// uses the record renders (listed files and "and N uses of M other files") add up to every file
// operation the steps held, at any rendering size.
func TestRecordBoundedTotalsExact(t *testing.T) {
	l := &Ledger{}
	truth, values := 0, 0
	for r, inv := range shellAndServiceEvents(120) {
		d := NewLedgerDelta(inv, 1)
		for _, s := range d.steps {
			truth += len(s.Files) + s.FilesOver
			values += len(s.Values)
		}
		l.apply(d)
		_ = r
	}
	if len(l.tools.Files) > maxFiles || len(l.tools.Commands) > maxCommands || len(l.tools.Failing) > maxFailing || len(l.tools.Values) > maxValues || len(l.tools.Requests) > maxRequests {
		t.Fatalf("over a bound: %d files, %d commands, %d failing, %d values, %d calls", len(l.tools.Files), len(l.tools.Commands), len(l.tools.Failing), len(l.tools.Values), len(l.tools.Requests))
	}
	listed := 0
	for _, f := range l.tools.Files {
		listed += f.uses()
	}
	if listed+l.tools.OtherFileUses != truth {
		t.Fatalf("the ledger holds %d file uses + %d others, the steps %d", listed, l.tools.OtherFileUses, truth)
	}
	fileUses := regexp.MustCompile(`(?:read|searched|wrote|created|removed|used|named)(?: ×(\d+))?`)
	other := regexp.MustCompile(`- and (\d+) uses of (?:(\d+) other files|other files)`)
	otherValues := regexp.MustCompile(`^- and (?:\d+ other calls?, )?(\d+) other values?$`)
	prev, valuesChecked := -1, 0
	for _, bytes := range []int{0, 64 << 10, 16 << 10, 6 << 10, 3 << 10, 1 << 10} {
		out := l.render(renderLimits{bytes: bytes}, false)
		if bytes > 0 && len(out) > bytes {
			t.Fatalf("render(%d) = %d bytes", bytes, len(out))
		}
		sum, files := 0, 0
		inRecord := false
		for _, line := range strings.Split(out, "\n") {
			switch {
			case line == secShellFiles || line == secNamed:
				inRecord = true
				continue
			case !strings.HasPrefix(line, "- "):
				inRecord = false
			}
			if !inRecord {
				continue
			}
			if m := other.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				sum += n
				continue
			}
			files++
			_, ops, _ := strings.Cut(line, ": ")
			for _, u := range fileUses.FindAllStringSubmatch(regexp.MustCompile(`\([^)]*\)| at line [\d, ]+`).ReplaceAllString(ops, ""), -1) {
				n := 1
				if u[1] != "" {
					n, _ = strconv.Atoi(u[1])
				}
				sum += n
			}
		}
		if files > 0 && sum != truth {
			t.Errorf("render(%d): %d files listed account for %d uses, want %d", bytes, files, sum, truth)
		}
		// The values: listed ones and "N other values" add up to what the ledger holds and
		// counts.
		if _, sec, ok := strings.Cut(out, "\n"+secValues+"\n"); ok {
			listed, others := 0, 0
			for _, line := range strings.Split(sec, "\n") {
				if !strings.HasPrefix(line, "- ") {
					break
				}
				if m := otherValues.FindStringSubmatch(line); m != nil {
					others, _ = strconv.Atoi(m[1])
					continue
				}
				if _, vals, ok := strings.Cut(line, " → "); ok {
					listed += len(strings.Split(vals, ", "))
				}
			}
			valuesChecked++
			if listed+others != len(l.tools.Values)+l.tools.OtherValues {
				t.Errorf("render(%d): %d values listed + %d others, the ledger %d + %d", bytes, listed, others, len(l.tools.Values), l.tools.OtherValues)
			}
		}
		if prev >= 0 && files > prev {
			t.Errorf("render(%d) lists %d files, more than with more room (%d)", bytes, files, prev)
		}
		prev = files
	}
	if valuesChecked < 3 {
		t.Errorf("the values section was checked in %d renders", valuesChecked)
	}
	t.Logf("%d values returned over the session; the ledger keeps %d, counts %d others", values, len(l.tools.Values), l.tools.OtherValues)
}

// Past the rendering bound the record's oldest entries go first, after the answers, errors and
// structured paths; the user's messages keep their priority over all of it.
func TestRecordDropsOldestFirst(t *testing.T) {
	task, steps := fixtures.ShellSession()
	l := &Ledger{}
	l.add(shellEvents("i1", task, steps), 1)
	full := l.render(renderLimits{}, false)
	if len(full) < 2000 {
		t.Fatalf("the whole render is %d bytes: too small to test dropping", len(full))
	}
	for _, bytes := range []int{1800, 1400, 1000} {
		out := l.render(renderLimits{bytes: bytes}, false)
		if strings.Contains(out, secAnswers) {
			t.Errorf("render(%d) keeps answers and drops the record:\n%s", bytes, out)
		}
		if !strings.Contains(out, secGoal+task) {
			t.Errorf("render(%d) lost the goal:\n%s", bytes, out)
		}
		// What is left of the record is its newest: the newest command is kept, the oldest gone.
		if !strings.Contains(out, "git diff --cached") {
			t.Errorf("render(%d) dropped the newest command:\n%s", bytes, out)
		}
		if strings.Contains(out, "tinyorm/__init__.py") {
			t.Errorf("render(%d) keeps a path named once, 33 steps ago:\n%s", bytes, out)
		}
	}
	if !strings.Contains(full, "tinyorm/__init__.py") {
		t.Errorf("the whole render lacks the oldest path:\n%s", full)
	}
}

// TestRecordDropsTimestampsFirst: the dates and times results returned (a schedule's, creation
// times) are the first values a bounded record leaves out, before older values of other kinds:
// a service agent's later searches return dozens of them, and without this rule they pushed out
// the ids the user's record returned first (payment methods, reservations), which the agent
// passes back to its later calls.
func TestRecordDropsTimestampsFirst(t *testing.T) {
	user, calls := fixtures.ServiceSession()
	l := &Ledger{}
	l.add(serviceTurn("s1", user[0], calls[0]), 1) // get_user_details
	var flights []string
	for i := range 12 {
		flights = append(flights, fmt.Sprintf(`{"flight_number": "HAT%03d", "scheduled_departure_time_est": "%02d:00:00", "scheduled_arrival_time_est": "%02d:30:00", "date": "2024-05-%02d"}`, 100+i, 6+i, 9+i, 10+i))
	}
	search := fixtures.ServiceCall{Name: "search_direct_flight", Args: map[string]any{"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}, Result: "[" + strings.Join(flights, ", ") + "]"}
	for k := range 3 {
		l.add(serviceTurn(fmt.Sprintf("q%d", k), "Any other flight that day?", search), 1)
	}
	full := l.render(renderLimits{}, false)
	for _, want := range []string{"credit_card_4421486", "AIXC49", "HAT111", "10:30:00"} {
		if !strings.Contains(full, want) {
			t.Fatalf("the whole render lacks %q:\n%s", want, full)
		}
	}
	// A bound that leaves out a third: only dates and times go.
	out := l.render(renderLimits{bytes: len(full) * 2 / 3}, false)
	kept := []string{"credit_card_4421486", "credit_card_1955700", "certificate_7504069", "NO6JO3", "AIXC49", "HKEG34", "mia.li3818@example.com"}
	for i := range 12 {
		kept = append(kept, fmt.Sprintf("HAT%03d", 100+i))
	}
	for _, want := range kept {
		if !strings.Contains(out, want) {
			t.Errorf("a render bounded to %d bytes lost %q:\n%s", len(full)*2/3, want, out)
		}
	}
	if strings.Count(out, ":00:00")+strings.Count(out, ":30:00") >= strings.Count(full, ":00:00")+strings.Count(full, ":30:00") {
		t.Errorf("a render bounded to %d bytes dropped no time:\n%s", len(full)*2/3, out)
	}
}

// TestLedgerEvictsTimestampsFirst: the ledger's own bound (maxValues) leaves out dates and times
// before older values of other kinds, as a bounded rendering does (TestRecordDropsTimestampsFirst):
// a service agent searching day after day fills the ledger with schedules, and without this rule
// they evicted the ids of the user's record, which no rendering can then bring back.
func TestLedgerEvictsTimestampsFirst(t *testing.T) {
	user, calls := fixtures.ServiceSession()
	l := &Ledger{}
	l.add(serviceTurn("s1", user[0], calls[0]), 1) // get_user_details
	ids := map[string]bool{}
	for v := range l.tools.Values {
		if !dateLike.MatchString(v) {
			ids[v] = true
		}
	}
	if len(ids) < 5 {
		t.Fatalf("the user's record returned %d ids, want several", len(ids))
	}
	for day := range 14 { // a search a day: 24 new times each
		var flights []string
		for i := range 12 {
			flights = append(flights, fmt.Sprintf(`{"flight_number": "HAT%03d", "scheduled_departure_time_est": "%02d:%02d:00", "scheduled_arrival_time_est": "%02d:%02d:00"}`, 100+i, 6+i, day*4, 9+i, day*4+1))
		}
		date := fmt.Sprintf("2024-05-%02d", 10+day)
		search := fixtures.ServiceCall{Name: "search_direct_flight", Args: map[string]any{"origin": "JFK", "destination": "SEA", "date": date}, Result: "[" + strings.Join(flights, ", ") + "]"}
		l.add(serviceTurn(fmt.Sprintf("q%d", day), "Any flight on "+date+"?", search), 1)
	}
	if l.tools.OtherValues == 0 {
		t.Fatalf("the searches filled %d of %d values: no eviction to test", len(l.tools.Values), maxValues)
	}
	for id := range ids {
		if _, ok := l.tools.Values[id]; !ok {
			t.Errorf("the ledger evicted %q, an id of the user's record, while it holds %d values (%d evicted)", id, len(l.tools.Values), l.tools.OtherValues)
		}
	}
}

// serviceTurn is invocation inv of a service agent: the user's text, one call c and its result,
// and the agent's answer.
func serviceTurn(inv, text string, c fixtures.ServiceCall) []Event {
	return []Event{userEv(inv+"-u", inv, text), callEv(inv+"-c", inv, inv+"-1", c.Name, c.Args),
		respEv(inv+"-r", inv, inv+"-1", c.Name, map[string]any{"result": c.Result}), modelEv(inv+"-m", inv, "Done.")}
}
