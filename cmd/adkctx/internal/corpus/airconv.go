package corpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// chatMessage is a message of an OpenAI chat conversation.
type chatMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// conversation plays one customer-service conversation: a scripted agent following the policy
// and a scripted user with a few requests, the tools running on the airline's state.
type conversation struct {
	al   *airline
	rng  *rand.Rand
	msgs []chatMessage
	cust *user // the customer (the simulated user knows their own account)
	u    *user // the profile as the agent last read it (nil before)
	read map[string]*reservation
	done bool // the conversation was handed over to a human
	// idGiven: the user put their user ID in their first message.
	idGiven bool
	// pending is what the agent says along with its next tool call.
	pending string
}

func (c *conversation) chance(p float64) bool { return c.rng.Float64() < p }
func (c *conversation) pick(xs ...string) string {
	return xs[c.rng.IntN(len(xs))]
}

// hear adds a user message; the agent answers a user message before the next one.
func (c *conversation) hear(s string) {
	if n := len(c.msgs); n > 0 && c.msgs[n-1].Role == "user" {
		c.say(c.pick("Understood. ", "I see. ", "Okay. ") + c.anythingElse())
	}
	c.msgs = append(c.msgs, chatMessage{Role: "user", Content: &s})
}

// say adds an assistant message, or continues the agent's last one when it was text.
func (c *conversation) say(s string) {
	if c.pending != "" {
		s = c.pending + "\n\n" + s
		c.pending = ""
	}
	if n := len(c.msgs); n > 0 && c.msgs[n-1].Role == "assistant" && c.msgs[n-1].ToolCalls == nil {
		joined := *c.msgs[n-1].Content + "\n\n" + s
		c.msgs[n-1].Content = &joined
		return
	}
	c.msgs = append(c.msgs, chatMessage{Role: "assistant", Content: &s})
}

// note is said with the next tool call, in the same message, as chat models do.
func (c *conversation) note(s string) { c.pending = s }

// namedCall is one tool call the agent sends.
type namedCall struct {
	name string
	args any
}

// tools sends calls in one assistant message and runs them; it returns the tools' results
// (nil for a refusal) and errors.
func (c *conversation) tools(calls ...namedCall) ([]any, []error) {
	msg := chatMessage{Role: "assistant"}
	if c.pending != "" {
		msg.Content = &c.pending
		c.pending = ""
	}
	var results []any
	var errs []error
	var answers []chatMessage
	for _, nc := range calls {
		args := argumentsJSON(nc.args)
		id := "call_" + randomToken(c.rng, 24)
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: id, Type: "function", Function: toolFunction{Name: nc.name, Arguments: args}})
		// The tool gets the arguments as the model wrote them: JSON.
		var decoded map[string]any
		if err := json.Unmarshal([]byte(args), &decoded); err != nil {
			panic(err) // argumentsJSON encodes maps and structs
		}
		res, err := c.al.call(nc.name, decoded, today)
		content := toolContent(res, err)
		answers = append(answers, chatMessage{Role: "tool", ToolCallID: id, Name: nc.name, Content: &content})
		// What the agent reads is the JSON it was sent, not the live state.
		var view any
		if err == nil {
			view = snapshot(res)
		}
		results = append(results, view)
		errs = append(errs, err)
	}
	c.msgs = append(c.msgs, msg)
	c.msgs = append(c.msgs, answers...)
	return results, errs
}

func (c *conversation) tool(name string, args any) (any, error) {
	r, e := c.tools(namedCall{name, args})
	return r[0], e[0]
}

// snapshot copies a result through JSON, so that later writes to the state do not change what
// the agent has read.
func snapshot(v any) any {
	b, _ := json.Marshal(v)
	switch v.(type) {
	case *user:
		var u user
		_ = json.Unmarshal(b, &u)
		return &u
	case *reservation:
		var r reservation
		_ = json.Unmarshal(b, &r)
		return &r
	case []flightOffer:
		var o []flightOffer
		_ = json.Unmarshal(b, &o)
		return o
	case [][2]flightOffer:
		var o [][2]flightOffer
		_ = json.Unmarshal(b, &o)
		return o
	case flightStatus:
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func (c *conversation) readUser() {
	res, err := c.tool("get_user_details", map[string]string{"user_id": c.cust.UserID})
	if err == nil {
		c.u = res.(*user)
	}
}

func (c *conversation) readReservation(id string) *reservation {
	res, err := c.tool("get_reservation_details", map[string]string{"reservation_id": id})
	if err != nil {
		return nil
	}
	r := res.(*reservation)
	c.read[id] = r
	return r
}

// findReservation finds the reservation the user describes: among those the agent has read
// already (it reads that one again, for its current state), else by reading the profile's
// other reservations, newest first, one or a few at a time.
func (c *conversation) findReservation(match func(*reservation) bool) *reservation {
	for _, id := range c.u.Reservations {
		if r := c.read[id]; r != nil && match(r) {
			return c.readReservation(id)
		}
	}
	var ids []string
	for _, id := range slices.Backward(c.u.Reservations) {
		if c.read[id] == nil {
			ids = append(ids, id)
		}
	}
	for len(ids) > 0 {
		n := 1
		if c.chance(0.3) {
			n = min(len(ids), 2+c.rng.IntN(2))
		}
		var calls []namedCall
		for _, id := range ids[:n] {
			calls = append(calls, namedCall{"get_reservation_details", map[string]string{"reservation_id": id}})
		}
		ids = ids[n:]
		results, errs := c.tools(calls...)
		var found *reservation
		for i, res := range results {
			if errs[i] != nil {
				continue
			}
			r := res.(*reservation)
			c.read[r.ReservationID] = r
			if found == nil && match(r) {
				found = r
			}
		}
		if found != nil {
			return found
		}
	}
	return nil
}

// airportName is how a user names an airport: the city, the code, or both.
func (c *conversation) airportName(code string) string {
	name, _ := c.airportNamed(code)
	return name
}

// airportNamed is airportName, and whether the name holds the code.
func (c *conversation) airportNamed(code string) (string, bool) {
	for _, a := range airports {
		if a.IATA == code {
			switch c.rng.IntN(3) {
			case 0:
				return a.City, false
			case 1:
				return code, true
			}
			return fmt.Sprintf("%s (%s)", a.City, code), true
		}
	}
	return code, true
}

func prettyDate(d string) string {
	t, err := time.Parse(dateLayout, d)
	if err != nil {
		return d
	}
	return t.Format("January 2")
}

func cabinName(c string) string { return strings.ReplaceAll(c, "_", " ") }

// paymentPhrase is how a user names one of their payment methods.
func (c *conversation) paymentPhrase(pm paymentMethod) string {
	switch pm.Source {
	case "credit_card":
		return c.pick(fmt.Sprintf("my %s ending in %s", strings.ToUpper(pm.Brand[:1])+pm.Brand[1:], pm.LastFour),
			fmt.Sprintf("the credit card ending in %s", pm.LastFour))
	case "gift_card":
		return c.pick("my gift card", fmt.Sprintf("the gift card with %s on it", money(pm.Amount)))
	}
	return c.pick("my travel certificate", "the certificate")
}

func (c *conversation) describePayment(pm paymentMethod) string {
	switch pm.Source {
	case "credit_card":
		return fmt.Sprintf("%s credit card ending in %s (%s)", strings.ToUpper(pm.Brand[:1])+pm.Brand[1:], pm.LastFour, pm.ID)
	case "gift_card":
		return fmt.Sprintf("gift card %s (balance %s)", pm.ID, money(pm.Amount))
	}
	return fmt.Sprintf("travel certificate %s (%s)", pm.ID, money(pm.Amount))
}

// choosePayment has the user pick a payment method able to pay amount (a gift card when one
// can, else a credit card), the agent listing them first when asked. It returns the method as
// the agent read it in the profile.
func (c *conversation) choosePayment(amount float64, allowCertificate bool) paymentMethod {
	var options []paymentMethod
	for _, pm := range c.u.PaymentMethods {
		if pm.Source == "credit_card" || (pm.Source == "gift_card" && pm.Amount >= amount) ||
			(allowCertificate && pm.Source == "certificate" && pm.Amount >= amount) {
			options = append(options, pm)
		}
	}
	chosen := options[c.rng.IntN(len(options))]
	if c.chance(0.5) {
		var lines []string
		for _, pm := range c.u.PaymentMethods {
			if pm.Source != "certificate" || allowCertificate {
				lines = append(lines, "- "+c.describePayment(pm))
			}
		}
		c.say(fmt.Sprintf("Which payment method would you like to use for the %s? On your profile you have:\n%s", money(amount), strings.Join(lines, "\n")))
		c.hear(c.pick("Please use ", "Let's use ", "Charge it to ") + c.paymentPhrase(chosen) + ".")
	} else {
		c.hear(c.pick("Oh, and please charge ", "I'd like to pay with ") + c.paymentPhrase(chosen) + ".")
	}
	return chosen
}

func (c *conversation) confirm() {
	c.hear(c.pick("Yes, please go ahead.", "Yes.", "Yes, that's correct. Please proceed.", "Sounds good, yes.", "Yes, do it."))
}

func (c *conversation) anythingElse() string {
	return c.pick("Is there anything else I can help you with?", "Can I help you with anything else today?", "Is there anything else you need?")
}

// futureReservations are the customer's reservations, not cancelled, whose flights have not
// departed: what the customer may want to change.
func (c *conversation) futureReservations(ok func(*reservation) bool) []*reservation {
	var out []*reservation
	for _, id := range c.cust.Reservations {
		r := c.al.reservations[id]
		if r.Status == "cancelled" || r.Flights[0].Date <= today.Format(dateLayout) {
			continue
		}
		if ok == nil || ok(r) {
			out = append(out, r)
		}
	}
	return out
}

// describeTrip is how the customer mentions a reservation: its id, or the route and date.
func (c *conversation) describeTrip(r *reservation) string {
	if c.chance(0.4) {
		return fmt.Sprintf("reservation %s", r.ReservationID)
	}
	return fmt.Sprintf("my trip from %s to %s on %s", c.airportName(r.Origin), c.airportName(r.Destination), prettyDate(r.Flights[0].Date))
}

// locate gets the reservation the customer talks about, by its id or by reading the profile's
// reservations.
func (c *conversation) locate(r *reservation, described string) *reservation {
	if strings.HasPrefix(described, "reservation ") {
		return c.readReservation(r.ReservationID)
	}
	if c.chance(0.3) {
		c.say(c.pick("Do you have the reservation ID?", "Could you tell me the reservation ID, if you have it?"))
		c.hear(c.pick("I don't have it at hand, sorry.", "No, I don't remember it.", "Not with me, can you look it up?"))
	}
	return c.findReservation(func(x *reservation) bool {
		return x.Origin == r.Origin && x.Destination == r.Destination && x.Flights[0].Date == r.Flights[0].Date
	})
}

func (c *conversation) listReservation(r *reservation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Reservation %s (%s, %s):\n", r.ReservationID, strings.ReplaceAll(r.FlightType, "_", " "), cabinName(r.Cabin))
	for _, f := range r.Flights {
		fmt.Fprintf(&b, "- %s: %s → %s on %s (%s per passenger)\n", f.FlightNumber, f.Origin, f.Destination, f.Date, money(float64(f.Price)))
	}
	var names []string
	for _, p := range r.Passengers {
		names = append(names, p.FirstName+" "+p.LastName)
	}
	fmt.Fprintf(&b, "- Passengers: %s\n- Checked bags: %d (%d charged); insurance: %s\n- Booked on %s", strings.Join(names, ", "), r.TotalBaggages, r.NonfreeBaggages, r.Insurance, strings.Replace(r.CreatedAt, "T", " at ", 1))
	var paid []string
	for _, p := range r.PaymentHistory {
		paid = append(paid, fmt.Sprintf("%s on %s", money(p.Amount), p.PaymentID))
	}
	fmt.Fprintf(&b, "\n- Payments: %s", strings.Join(paid, ", "))
	return b.String()
}
