package plan

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	. "github.com/adkctx/adkctx/compaction"
)

// The sessions below are written after the two classes of agents the ledger's record is for:
// a coding agent with one tool that runs a shell command (its result the observation template
// of a minimal shell agent: the return code in a tag, then the output), and a customer-service
// agent with JSON tools whose read tools return the ids its write tools pass back.

// shellStep is one step of a shell agent: its command and what the tool returned.
type shellStep struct {
	command string
	rc      int
	output  string
}

// observation is a shell tool's result text in the minimal agent's template.
func (s shellStep) observation() string {
	return fmt.Sprintf("<returncode>%d</returncode>\n<output>\n%s</output>", s.rc, s.output)
}

// numbered is `nl -ba` of lines from..to of a file whose line n is line(n).
func numbered(from, to int, line func(n int) string) string {
	var b strings.Builder
	for n := from; n <= to; n++ {
		fmt.Fprintf(&b, "%6d\t%s\n", n, line(n))
	}
	return b.String()
}

func pyLine(n int) string {
	switch n % 7 {
	case 0:
		return fmt.Sprintf("    def _helper_%d(self, value):", n)
	case 1:
		return "        if value is None:"
	case 2:
		return "            return self._empty()"
	case 3:
		return fmt.Sprintf("        return self._clone(value, depth=%d)", n%5)
	default:
		return ""
	}
}

// shellSession is a 35-step session of a shell agent fixing a bug: it lists and searches the
// tree, views files in ranges, writes a script with a heredoc, edits with sed -i and a patch,
// runs the script and the tests (some fail), and removes its scratch files.
func shellSession() (task string, steps []shellStep) {
	task = "Fix the bug in the tinyorm repository at /testbed: QuerySet.exclude(field=None) raises TypeError " +
		"instead of excluding rows whose field is NULL. Make the change in the library code, not in the tests."
	steps = []shellStep{
		{"cd /testbed && ls -la", 0, "total 48\ndrwxr-xr-x 1 root root 4096 Mar  1 12:00 .\n-rw-r--r-- 1 root root 1203 Mar  1 12:00 setup.cfg\n-rw-r--r-- 1 root root  877 Mar  1 12:00 README.rst\ndrwxr-xr-x 1 root root 4096 Mar  1 12:00 tinyorm\ndrwxr-xr-x 1 root root 4096 Mar  1 12:00 tests\n"},
		{"cd /testbed && find tinyorm -name '*.py' | sort | head -30", 0, "tinyorm/__init__.py\ntinyorm/constants.py\ntinyorm/fields.py\ntinyorm/lookups.py\ntinyorm/manager.py\ntinyorm/query.py\ntinyorm/where.py\n"},
		{"cd /testbed && grep -rn \"def exclude\\|def filter\" tinyorm/", 0, "tinyorm/query.py:212:    def filter(self, *args, **kwargs):\ntinyorm/query.py:219:    def exclude(self, *args, **kwargs):\ntinyorm/manager.py:48:    def filter(self, *args, **kwargs):\n"},
		{"cd /testbed && nl -ba tinyorm/query.py | sed -n '200,260p'", 0, numbered(200, 260, pyLine)},
		{"cd /testbed && grep -n \"_filter_or_exclude\" tinyorm/query.py", 0, "215:        return self._filter_or_exclude(False, args, kwargs)\n222:        return self._filter_or_exclude(True, args, kwargs)\n231:    def _filter_or_exclude(self, negate, args, kwargs):\n"},
		{"cd /testbed && sed -n '225,300p' tinyorm/query.py", 0, strings.Repeat("        clone.query.add_q(Q(*args, **kwargs))\n", 76)},
		{"cd /testbed && cat tinyorm/constants.py", 0, "LOOKUP_SEP = \"__\"\nQUERY_TERMS = {\"exact\", \"isnull\", \"in\"}\n"},
		{"cd /testbed && cat <<'EOF' > reproduce.py\nfrom tinyorm import Model, fields\n\nclass Item(Model):\n    name = fields.CharField(null=True)\n\nprint(list(Item.objects.exclude(name=None)))\nEOF", 0, ""},
		{"cd /testbed && python reproduce.py", 1, "Traceback (most recent call last):\n  File \"/testbed/reproduce.py\", line 6, in <module>\n    print(list(Item.objects.exclude(name=None)))\n  File \"/testbed/tinyorm/query.py\", line 244, in _filter_or_exclude\n    clone.query.add_q(~Q(*args, **kwargs))\n  File \"/testbed/tinyorm/where.py\", line 88, in add\n    field, lookup = key.split(\"__\")\nTypeError: cannot unpack non-iterable NoneType object\n"},
		{"cd /testbed && grep -rn \"class WhereNode\" tinyorm/", 0, "tinyorm/where.py:12:class WhereNode:\n"},
		{"cd /testbed && sed -n '60,120p' tinyorm/where.py", 0, strings.Repeat("        self.children.append((field, lookup, value))\n", 61)},
		{"cd /testbed && head -n 40 tinyorm/fields.py", 0, strings.Repeat("class Field:\n    null = False\n", 20)},
		{"cd /testbed && grep -rn \"resolve_lookup\" --include=*.py .", 0, "./tinyorm/lookups.py:30:def resolve_lookup(field, name):\n./tinyorm/fields.py:77:        return resolve_lookup(self, name)\n./tests/test_lookups.py:15:    assert resolve_lookup(f, 'exact')\n"},
		{"cd /testbed && nl -ba tinyorm/lookups.py | sed -n '1,80p'", 0, numbered(1, 80, pyLine)},
		{"cd /testbed && sed -i 's/key.split(\"__\")/key.split(LOOKUP_SEP, 1)/' tinyorm/where.py", 0, ""},
		{"cd /testbed && python reproduce.py", 1, "Traceback (most recent call last):\n  File \"/testbed/reproduce.py\", line 6, in <module>\n    print(list(Item.objects.exclude(name=None)))\n  File \"/testbed/tinyorm/where.py\", line 91, in add\n    if value is None and lookup != \"isnull\":\nNameError: name 'LOOKUP_SEP' is not defined\n"},
		{"cd /testbed && grep -n \"^from\\|^import\" tinyorm/where.py", 0, "1:import itertools\n2:from tinyorm.lookups import resolve_lookup\n"},
		{"cd /testbed && sed -i '2a from tinyorm.constants import LOOKUP_SEP' tinyorm/where.py", 0, ""},
		{"cd /testbed && python reproduce.py", 0, "[<Item: 1>, <Item: 3>]\n"},
		{"cd /testbed && python -m pytest tests/test_query.py -x -q 2>&1 | tail -20", 1, "..........F\n=================================== FAILURES ===================================\n___________________________ test_exclude_none ___________________________\ntests/test_query.py:142: in test_exclude_none\n    assert list(qs) == [a, c]\nE   AssertionError: assert [] == [<Item: 1>, <Item: 3>]\n=========================== short test summary info ============================\nFAILED tests/test_query.py::test_exclude_none - AssertionError: assert [] == [<Item: 1>, <Item: 3>]\n1 failed, 10 passed in 0.21s\n"},
		{"cd /testbed && nl -ba tests/test_query.py | sed -n '130,160p'", 0, numbered(130, 160, pyLine)},
		{"cd /testbed && tail -n 30 tinyorm/where.py", 0, strings.Repeat("    def as_sql(self):\n        return ' AND '.join(self.parts)\n", 15)},
		{"cd /testbed && python - <<'PY'\nimport re\np = 'tinyorm/where.py'\ns = open(p).read()\ns = s.replace('if value is None and lookup != \"isnull\":', 'if value is None:\\n            lookup = \"isnull\"; value = True')\nopen(p, 'w').write(s)\nPY", 0, ""},
		{"cd /testbed && python -m pytest tests/test_query.py -x -q", 0, "...........\n11 passed in 0.19s\n"},
		{"cd /testbed && python -m pytest tests/ -q 2>&1 | tail -5", 1, "FAILED tests/test_lookups.py::test_isnull_lookup - KeyError: 'isnull'\n1 failed, 47 passed in 0.88s\n"},
		{"cd /testbed && sed -n '1,40p' tests/test_lookups.py", 0, strings.Repeat("def test_lookup():\n    pass\n", 20)},
		{"cd /testbed && grep -rn \"isnull\" tinyorm/", 0, "tinyorm/lookups.py:55:    \"isnull\": IsNull,\ntinyorm/where.py:92:            lookup = \"isnull\"; value = True\ntinyorm/constants.py:2:QUERY_TERMS = {\"exact\", \"isnull\", \"in\"}\n"},
		{"cd /testbed && sed -n '95,110p' tinyorm/where.py", 0, strings.Repeat("        return lookup_class(field, value)\n", 16)},
		{"cd /testbed && patch -p1 <<'EOF'\n--- a/tinyorm/lookups.py\n+++ b/tinyorm/lookups.py\n@@ -52,6 +52,7 @@\n LOOKUPS = {\n     \"exact\": Exact,\n+    \"isnull\": IsNull,\n }\nEOF", 0, "patching file tinyorm/lookups.py\n"},
		{"cd /testbed && python -m pytest tests/ -q 2>&1 | tail -3", 0, "48 passed in 0.85s\n"},
		{"cd /testbed && git diff --stat", 0, " tinyorm/lookups.py | 1 +\n tinyorm/where.py   | 5 +++--\n 2 files changed, 4 insertions(+), 2 deletions(-)\n"},
		{"cd /testbed && mkdir -p scratch && cp reproduce.py scratch/ && touch scratch/notes.txt", 0, ""},
		{"cd /testbed && rm reproduce.py && rm -rf scratch", 0, ""},
		{"cd /testbed && git status --short", 0, " M tinyorm/lookups.py\n M tinyorm/where.py\n"},
		{"cd /testbed && echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached | head -50", 0, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a/tinyorm/where.py b/tinyorm/where.py\n"},
	}
	return task, steps
}

// shellEvents are the session's events in one invocation: the task, then per step the agent's
// thought with its bash call and the tool's result.
func shellEvents(inv string, task string, steps []shellStep) []Event {
	events := []Event{userEv(inv+"-u", inv, task)}
	for k, s := range steps {
		id := fmt.Sprintf("%s-%02d", inv, k)
		call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: fmt.Sprintf("THOUGHT: step %d.", k)},
			{FunctionCall: &genai.FunctionCall{ID: id, Name: "bash", Args: map[string]any{"command": s.command}}},
		}}
		events = append(events,
			Event{ID: id + "c", InvocationID: inv, Author: "agent", Content: call},
			respEv(id+"r", inv, id, "bash", map[string]any{"output": s.observation()}))
	}
	return events
}

// serviceCall is one step of a service agent: a JSON tool's call and its result.
type serviceCall struct {
	name   string
	args   map[string]any
	result string // JSON text, as the tools return it
}

// serviceSession is a customer-service conversation: the agent looks the user up, reads two
// reservations and a flight, then books a flight paying with ids the user record returned many
// steps earlier, and cancels a reservation.
func serviceSession() (user []string, calls []serviceCall) {
	user = []string{
		"Hi, I'm Mia Li (user id mia_li_3668). I want to book a one-way flight from New York to Seattle on May 20.",
		"Use my certificate first and put the rest on the Visa card. Also cancel reservation NO6JO3, my plans changed.",
	}
	userDetails := `{"user_id": "mia_li_3668", "name": {"first_name": "Mia", "last_name": "Li"},
 "address": {"address1": "975 Sunset Drive", "address2": "Suite 217", "city": "Austin", "country": "USA", "state": "TX", "zip": "78750"},
 "email": "mia.li3818@example.com", "dob": "1990-04-05",
 "payment_methods": {"credit_card_4421486": {"source": "credit_card", "brand": "visa", "last_four": "7447", "id": "credit_card_4421486"},
   "certificate_7504069": {"source": "certificate", "amount": 250, "id": "certificate_7504069"},
   "credit_card_1955700": {"source": "credit_card", "brand": "mastercard", "last_four": "1907", "id": "credit_card_1955700"}},
 "saved_passengers": [{"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}],
 "membership": "gold", "reservations": ["NO6JO3", "AIXC49", "HKEG34"]}`
	flights := func(origin, dest, date string, numbers ...string) string {
		var list []map[string]any
		for i, n := range numbers {
			list = append(list, map[string]any{"flight_number": n, "origin": origin, "destination": dest, "status": "available",
				"scheduled_departure_time_est": fmt.Sprintf("%02d:00:00", 6+3*i), "scheduled_arrival_time_est": fmt.Sprintf("%02d:30:00", 12+3*i),
				"date": date, "available_seats": map[string]any{"basic_economy": 9, "economy": 12 + i, "business": 4},
				"prices": map[string]any{"basic_economy": 63 + i, "economy": 182 + 10*i, "business": 471 + i}})
		}
		b, _ := json.Marshal(list)
		return string(b)
	}
	calls = []serviceCall{
		{"get_user_details", map[string]any{"user_id": "mia_li_3668"}, userDetails},
		{"get_reservation_details", map[string]any{"reservation_id": "NO6JO3"}, `{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "origin": "DTW", "destination": "LAX", "flight_type": "one_way", "cabin": "economy",
 "flights": [{"flight_number": "HAT275", "date": "2024-05-18", "price": 143, "origin": "DTW", "destination": "LAX"}],
 "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
 "payment_history": [{"payment_id": "credit_card_4421486", "amount": 143}], "created_at": "2024-05-02T10:21:44", "total_baggages": 0, "insurance": "no"}`},
		{"get_reservation_details", map[string]any{"reservation_id": "AIXC49"}, `{"reservation_id": "AIXC49", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SFO", "flight_type": "round_trip", "cabin": "business",
 "flights": [{"flight_number": "HAT136", "date": "2024-05-24", "price": 1286, "origin": "JFK", "destination": "SFO"}, {"flight_number": "HAT247", "date": "2024-05-29", "price": 1190, "origin": "SFO", "destination": "JFK"}],
 "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
 "payment_history": [{"payment_id": "credit_card_1955700", "amount": 2476}], "created_at": "2024-05-01T08:02:13", "total_baggages": 1, "insurance": "yes"}`},
		{"list_all_airports", map[string]any{}, `{"JFK": "New York", "LGA": "New York", "EWR": "Newark", "SEA": "Seattle", "SFO": "San Francisco", "LAX": "Los Angeles", "DTW": "Detroit", "ORD": "Chicago"}`},
		{"search_direct_flight", map[string]any{"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}, flights("JFK", "SEA", "2024-05-20", "HAT069", "HAT083", "HAT251")},
		{"search_direct_flight", map[string]any{"origin": "LGA", "destination": "SEA", "date": "2024-05-20"}, `[]`},
		{"calculate", map[string]any{"expression": "182 - 250"}, `"-68.0"`},
		{"think", map[string]any{"thought": "The certificate covers the whole economy fare; the Visa card pays nothing."}, `""`},
		{"get_flight_status", map[string]any{"flight_number": "HAT069", "date": "2024-05-20"}, `"available"`},
		{"search_onestop_flight", map[string]any{"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}, flights("JFK", "ORD", "2024-05-20", "HAT112", "HAT155")},
		{"book_reservation", map[string]any{"user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy",
			"flights":         []any{map[string]any{"flight_number": "HAT069", "date": "2024-05-20"}},
			"passengers":      []any{map[string]any{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}},
			"payment_methods": []any{map[string]any{"payment_id": "certificate_7504069", "amount": 182.0}},
			"total_baggages":  0.0, "nonfree_baggages": 0.0, "insurance": "no"},
			`{"reservation_id": "Q69X3R", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT069", "date": "2024-05-20", "price": 182, "origin": "JFK", "destination": "SEA"}], "payment_history": [{"payment_id": "certificate_7504069", "amount": 182}], "created_at": "2024-05-15T15:00:00", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}`},
		{"cancel_reservation", map[string]any{"reservation_id": "NO6JO3"}, `{"reservation_id": "NO6JO3", "status": "cancelled", "payment_history": [{"payment_id": "credit_card_4421486", "amount": 143}, {"payment_id": "credit_card_4421486", "amount": -143}]}`},
	}
	return user, calls
}

// serviceEvents are the session's events: the user's first message, the first five calls, an
// answer; the second message, the rest, an answer. Results travel as adk-go's function
// responses: {"result": <the tool's JSON text>}.
func serviceEvents(user []string, calls []serviceCall) []Event {
	var events []Event
	add := func(inv string, k int, c serviceCall) {
		id := fmt.Sprintf("%s-%02d", inv, k)
		events = append(events, callEv(id+"c", inv, id, c.name, c.args), respEv(id+"r", inv, id, c.name, map[string]any{"result": c.result}))
	}
	events = append(events, userEv("s1-u", "s1", user[0]))
	for k, c := range calls[:5] {
		add("s1", k, c)
	}
	events = append(events, modelEv("s1-m", "s1", "I found direct flights from JFK to Seattle on May 20: HAT069, HAT083 and HAT251."))
	events = append(events, userEv("s2-u", "s2", user[1]))
	for k, c := range calls[5:] {
		add("s2", k+5, c)
	}
	return append(events, modelEv("s2-m", "s2", "Booked reservation Q69X3R on HAT069 and cancelled NO6JO3."))
}
