package request

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// contentsFromBytes builds a history from fuzz bytes: each byte picks a content kind, following
// bytes its parts. Names and ids come from tiny alphabets so that calls and responses collide.
func nzContentsFromBytes(data []byte) []*genai.Content {
	names := []string{"a", "b", "c"}
	ids := []string{"", "", "1", "2", "adk-x"}
	var cs []*genai.Content
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	for len(data) > 0 && len(cs) < 64 {
		op := next()
		k := int(op>>4)%4 + 1
		switch op % 8 {
		case 0:
			cs = append(cs, nzUser(nzText("t")))
		case 1, 2:
			c := nzModel()
			for range k {
				b := next()
				c.Parts = append(c.Parts, nzCall(ids[int(b)%len(ids)], names[int(b>>3)%len(names)]))
			}
			cs = append(cs, c)
		case 3, 4:
			c := nzUser()
			for range k {
				b := next()
				switch b % 9 {
				case 7:
					c.Parts = append(c.Parts, nzText("x"))
				case 8:
					c.Parts = append(c.Parts, nil)
				default:
					c.Parts = append(c.Parts, nzResp(ids[int(b)%len(ids)], names[int(b>>3)%len(names)], "r"))
				}
			}
			cs = append(cs, c)
		case 5:
			cs = append(cs, nil)
		case 6:
			b := next()
			cs = append(cs, nzModel(nzText("m"), nzCall(ids[int(b)%len(ids)], names[int(b>>3)%len(names)]),
				nzResp(ids[int(b>>1)%len(ids)], names[int(b>>4)%len(names)], "r")))
		case 7:
			// Parallel calls answered one content per response, in an order the next byte picks.
			// Their ids ("p0", …) come from no other case: each has exactly one real answer.
			c, order := nzModel(), next()
			var answers []*genai.Content
			for j := range k {
				id, name := fmt.Sprintf("p%d", j), names[(int(order)+j)%len(names)]
				c.Parts = append(c.Parts, nzCall(id, name))
				answers = append(answers, nzUser(nzResp(id, name, "r")))
			}
			for j := range answers {
				r := (int(order) >> 2) % (j + 1)
				answers[j], answers[r] = answers[r], answers[j]
			}
			cs = append(append(cs, c), answers...)
		}
	}
	return cs
}

func FuzzNormalize(f *testing.F) {
	f.Add([]byte{1, 8, 3, 8})
	f.Add([]byte("20000X0")) // repeated ids: once broke idempotency
	f.Add([]byte{0x11, 0, 9, 0x13, 9, 0})
	f.Add([]byte{3, 1, 5, 1, 2, 6, 77, 0})
	f.Add([]byte{0x31, 1, 2, 3, 4, 0x34, 4, 3, 2, 1})
	f.Add([]byte{0x17, 5, 0x27, 9, 0x37, 0})           // parallel calls answered one content each
	f.Add([]byte{0x27, 13, 0x13, 9, 0x0f, 0x37, 2, 0}) // … followed by more responses, then calls
	f.Fuzz(func(t *testing.T, data []byte) {
		in := nzContentsFromBytes(data)
		before := nzSnapshot(t, in)
		req := &LLMRequest{Contents: in}
		rep := Normalize(req)
		if err := nzValidPairs(req.Contents); err != nil {
			t.Fatalf("invalid output: %v\nin:  %s\nout: %s", err, before, nzSnapshot(t, req.Contents))
		}
		if nzSnapshot(t, in) != before {
			t.Fatalf("input mutated")
		}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p == nil {
					continue
				}
				if fr := p.FunctionResponse; fr != nil && strings.HasPrefix(fr.ID, "p") && fr.Response["error"] == syntheticError {
					t.Fatalf("call %s/%s was answered, yet got a synthetic response\nin:  %s\nout: %s", fr.ID, fr.Name, before, nzSnapshot(t, req.Contents))
				}
			}
		}
		if len(rep.SyntheticNames) != rep.SyntheticResponses || len(rep.OrphanNames) != rep.OrphansRemoved {
			t.Fatalf("report names do not match counts: %+v", rep)
		}
		once := nzSnapshot(t, req.Contents)
		rep2 := Normalize(req)
		if changed(rep2) || nzSnapshot(t, req.Contents) != once {
			t.Fatalf("not idempotent: %+v\nonce:  %s\ntwice: %s", rep2, once, nzSnapshot(t, req.Contents))
		}
	})
}
