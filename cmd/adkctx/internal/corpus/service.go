package corpus

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// ServiceOptions configures Service.
type ServiceOptions struct {
	// Seed selects the airline's data and every conversation. The same seed gives the same files
	// on every machine.
	Seed int64
	// Sessions is the number of conversations to write. Default 10.
	Sessions int
	// Dir receives the conversation files; it is created if missing. Required.
	Dir string
}

// Conversation lengths, in messages, system message included: those of the recorded
// conversations of issue 28's service class.
const (
	MinServiceMessages = 36
	MaxServiceMessages = 62
)

// usersInDomain is the number of users the airline has.
const usersInDomain = 150

// serviceFile is a conversation file: OpenAI chat messages and the tools they were made with.
type serviceFile struct {
	Messages []chatMessage `json:"messages"`
	Tools    []toolSchema  `json:"tools"`
}

// Service writes conversations of a customer-service agent with JSON tools, one OpenAI chat
// file per conversation, and returns their paths in order. See the package documentation.
func Service(opts ServiceOptions) ([]string, error) {
	if opts.Dir == "" {
		return nil, errors.New("corpus: ServiceOptions.Dir is required")
	}
	if opts.Sessions <= 0 {
		opts.Sessions = 10
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for i := range opts.Sessions {
		msgs, err := serviceConversation(opts.Seed, i)
		if err != nil {
			return nil, err
		}
		b, err := marshalJSON(serviceFile{Messages: msgs, Tools: airlineTools()})
		if err != nil {
			return nil, err
		}
		name := filepath.Join(opts.Dir, fmt.Sprintf("service-%03d.json", i))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}

// serviceConversation plays conversation i: every conversation starts from the same airline
// (the seed's), as a benchmark resets its database per task. A conversation whose length falls
// outside the range is played again with the next random stream.
func serviceConversation(seed int64, i int) ([]chatMessage, error) {
	for attempt := range 50 {
		al := newAirline(rand.New(rand.NewPCG(uint64(seed), 0xa1)), usersInDomain)
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)<<16|uint64(attempt)+1))
		c := &conversation{al: al, rng: rng, read: map[string]*reservation{}}
		c.cust = al.users[al.userOrder[rng.IntN(len(al.userOrder))]]
		policy := servicePolicy()
		c.msgs = append(c.msgs, chatMessage{Role: "system", Content: &policy})
		c.run()
		if n := len(c.msgs); n >= MinServiceMessages && n <= MaxServiceMessages {
			return c.msgs, nil
		}
	}
	return nil, fmt.Errorf("corpus: service conversation %d: no length within %d-%d messages", i, MinServiceMessages, MaxServiceMessages)
}

// run plays requests until the conversation is long enough, without going past its maximum.
func (c *conversation) run() {
	all := serviceIntents()
	// A weighted shuffle: the requests customers come with most often tend to come first.
	keys := make([]float64, len(all))
	for i, it := range all {
		keys[i] = math.Pow(c.rng.Float64(), 1/it.weight)
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[b], keys[a]) })
	used := map[int]bool{}
	opening := true
	for !c.done {
		if len(c.msgs) >= MinServiceMessages && c.chance(0.6) {
			break
		}
		played := false
		for _, k := range order {
			it := all[k]
			if used[k] || len(c.msgs)+it.size+2 > MaxServiceMessages {
				continue
			}
			used[k] = true
			if it.play(c, opening) {
				played, opening = true, false
				break
			}
		}
		if !played {
			break
		}
	}
	if !c.done && !opening {
		c.hear(c.pick("No, that's all. Thank you!", "That's everything, thanks for your help.", "Nope, that's it. Thanks!"))
		c.say(c.pick("You're welcome! Have a great trip.", "Glad I could help. Have a nice day!", "You're welcome. Safe travels!"))
	}
}
