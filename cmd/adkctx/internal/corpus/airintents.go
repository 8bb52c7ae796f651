package corpus

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The requests a customer brings to a conversation. Each checks that it applies to the
// customer's account, then plays the exchange; it returns false, having said nothing, when it
// does not apply.

type intent struct {
	name   string
	size   int     // messages it usually takes, to keep a conversation within its length
	weight float64 // how often customers come with it
	play   func(c *conversation, opening bool) bool
}

func serviceIntents() []intent {
	return []intent{
		{"book", 15, 3, (*conversation).book},
		{"cancel", 9, 1.5, (*conversation).cancelTrip},
		{"change", 13, 2, (*conversation).changeFlight},
		{"baggage", 8, 2, (*conversation).addBaggage},
		{"passengers", 7, 1, (*conversation).fixPassenger},
		{"compensation", 9, 1, (*conversation).complain},
		{"upgrade", 11, 2, (*conversation).upgrade},
		{"status", 5, 0.7, (*conversation).flightStatusQuestion},
	}
}

// lead is how a request starts: a greeting in the first one, "also" in the others.
func (c *conversation) lead(opening bool, s string) string {
	if opening {
		s = c.pick("Hi! ", "Hello, ", "Hi there. ", "Good afternoon. ") + s
		if c.chance(0.35) {
			c.idGiven = true
			s += c.pick(" My user ID is ", " I'm ", " User ID: ") + c.cust.UserID + "."
		}
		return s
	}
	return c.pick("Yes, actually. ", "Yes, one more thing: ", "Also, ", "Yes. ") + s
}

// book: a new trip, searched, chosen, priced and paid with a method from the profile.
func (c *conversation) book(opening bool) bool {
	date := today.AddDate(0, 0, 2+c.rng.IntN(10)).Format(dateLayout)
	var out *scheduledFlight
	for _, num := range c.rng.Perm(len(c.al.flightOrder)) {
		f := c.al.flights[c.al.flightOrder[num]]
		if offers := c.al.searchDirect(f.Origin, f.Destination, date); len(offers) >= 1 && f.Origin != f.Destination {
			out = f
			break
		}
	}
	if out == nil {
		return false
	}
	origin, dest := out.Origin, out.Destination
	roundTrip := c.chance(0.4) && len(c.al.directFlights(dest, origin)) > 0
	var back string
	if roundTrip {
		back = today.AddDate(0, 0, 13+c.rng.IntN(4)).Format(dateLayout)
	}
	cabin := []string{"economy", "economy", "business", "basic_economy"}[c.rng.IntN(4)]
	npax := 1 + c.rng.IntN(3)
	var pax []person
	pax = append(pax, person{c.cust.Name.FirstName, c.cust.Name.LastName, c.cust.DOB})
	for len(pax) < npax {
		if len(c.cust.SavedPassengers) >= len(pax) && c.chance(0.6) {
			pax = append(pax, c.cust.SavedPassengers[len(pax)-1])
			continue
		}
		pax = append(pax, newPerson(c.rng, c.cust.Name.LastName))
	}
	oName, oCode := c.airportNamed(origin)
	dName, dCode := c.airportNamed(dest)
	trip := fmt.Sprintf("a one-way flight from %s to %s on %s", oName, dName, date)
	if roundTrip {
		trip = fmt.Sprintf("a round trip from %s to %s, leaving %s and coming back %s", oName, dName, date, back)
	}
	details := fmt.Sprintf("%s, in %s", passengerCount(npax), cabinName(cabin))
	if c.chance(0.5) {
		c.hear(c.lead(opening, c.pick("I'd like to book ", "I want to book ", "Can you book me ")+trip+": "+details+"."))
		c.authenticate(opening)
	} else {
		c.hear(c.lead(opening, c.pick("I'd like to book ", "I want to book ", "Can you book me ")+trip+"."))
		c.authenticate(opening)
		c.say(c.pick("Sure. Which cabin would you like: basic economy, economy or business? And how many passengers are traveling?",
			"Happy to help. How many passengers, and which cabin class do you prefer (basic economy, economy, business)?"))
		c.hear(strings.ToUpper(details[:1]) + details[1:] + ".")
	}
	// A city named without its airport: the agent looks the codes up.
	if !oCode || !dCode {
		c.note("Let me check the airport codes.")
		c.tool("list_airports", map[string]string{})
	}
	ci := slices.Index(cabins, cabin)
	chosen, ok := c.pickFlight(origin, dest, date, ci, npax)
	if !ok {
		return true
	}
	legs := []flightOffer{chosen}
	if roundTrip {
		ret, ok := c.pickFlight(dest, origin, back, ci, npax)
		if !ok {
			return true
		}
		legs = append(legs, ret)
	}
	// Passengers beyond the user: saved ones are confirmed, others given by the user.
	if npax > 1 {
		c.say(fmt.Sprintf("Please give me the full name and date of birth of the other %s.", plural(npax-1, "passenger", "passengers")))
		var parts []string
		for _, p := range pax[1:] {
			parts = append(parts, fmt.Sprintf("%s %s, born %s", p.FirstName, p.LastName, p.DOB))
		}
		c.hear(c.pick("Sure: ", "They are ", "") + strings.Join(parts, "; ") + ".")
	}
	free := freeBags(c.u.Membership, cabin) * npax
	bags := c.rng.IntN(npax + 2)
	nonfree := max(bags-free, 0)
	c.say(fmt.Sprintf("How many checked bags will you bring? As a %s member in %s, you get %s for this booking. Would you also like travel insurance for $%d per passenger?",
		c.u.Membership, cabinName(cabin), plural(free, "free checked bag", "free checked bags"), insurancePrice))
	insurance := "no"
	if c.chance(0.4) {
		insurance = "yes"
	}
	insWords := map[string]string{"yes": "and yes to the insurance", "no": "and no insurance"}[insurance]
	c.hear(fmt.Sprintf("%s, %s.", plural(bags, "checked bag", "checked bags"), insWords))

	var terms []string
	for _, l := range legs {
		terms = append(terms, fmt.Sprintf("%d * %d", pricesOf(l)[ci], npax))
	}
	if insurance == "yes" {
		terms = append(terms, fmt.Sprintf("%d * %d", insurancePrice, npax))
	}
	if nonfree > 0 {
		terms = append(terms, fmt.Sprintf("%d * %d", bagFee, nonfree))
	}
	res, err := c.tool("calculate", map[string]string{"expression": strings.Join(terms, " + ")})
	if err != nil {
		return true
	}
	total := res.(map[string]any)["result"].(float64)

	var summary strings.Builder
	fmt.Fprintf(&summary, "Here is the booking:\n")
	for _, l := range legs {
		fmt.Fprintf(&summary, "- %s %s → %s on %s, departing %s, %s, %s per passenger\n", l.FlightNumber, l.Origin, l.Destination, l.Date, l.DepartureTime, cabinName(cabin), money(float64(pricesOf(l)[ci])))
	}
	var names []string
	for _, p := range pax {
		names = append(names, p.FirstName+" "+p.LastName)
	}
	fmt.Fprintf(&summary, "- Passengers: %s\n- Checked bags: %d (%d charged)\n- Insurance: %s\n- Total: %s", strings.Join(names, ", "), bags, nonfree, insurance, money(total))
	c.say(summary.String())
	pm := c.choosePayment(total, true)
	c.say(fmt.Sprintf("I'll charge %s to %s. Shall I book it?", money(total), c.describePayment(pm)))
	c.confirm()
	flights := make([]map[string]string, 0, len(legs))
	for _, l := range legs {
		flights = append(flights, map[string]string{"flight_number": l.FlightNumber, "date": l.Date})
	}
	flightType := "one_way"
	if roundTrip {
		flightType = "round_trip"
	}
	booked, err := c.tool("book_reservation", bookArgs{
		UserID: c.u.UserID, Origin: origin, Destination: dest, FlightType: flightType, Cabin: cabin,
		Flights: flights, Passengers: pax,
		PaymentMethods: []payment{{PaymentID: pm.ID, Amount: total}},
		TotalBaggages:  bags, NonfreeBaggages: nonfree, Insurance: insurance,
	})
	if err != nil {
		c.say(fmt.Sprintf("I'm sorry, the booking failed: %v. %s", err, c.anythingElse()))
		return true
	}
	r := booked.(*reservation)
	c.say(fmt.Sprintf("Your reservation is booked. The reservation ID is %s. %s", r.ReservationID, c.anythingElse()))
	return true
}

type bookArgs struct {
	UserID          string              `json:"user_id"`
	Origin          string              `json:"origin"`
	Destination     string              `json:"destination"`
	FlightType      string              `json:"flight_type"`
	Cabin           string              `json:"cabin"`
	Flights         []map[string]string `json:"flights"`
	Passengers      []person            `json:"passengers"`
	PaymentMethods  []payment           `json:"payment_methods"`
	TotalBaggages   int                 `json:"total_baggages"`
	NonfreeBaggages int                 `json:"nonfree_baggages"`
	Insurance       string              `json:"insurance"`
}

func pricesOf(o flightOffer) [3]int {
	return [3]int{o.Prices.BasicEconomy, o.Prices.Economy, o.Prices.Business}
}

func seatsOf(o flightOffer) [3]int {
	return [3]int{o.AvailableSeats.BasicEconomy, o.AvailableSeats.Economy, o.AvailableSeats.Business}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func passengerCount(n int) string {
	switch n {
	case 1:
		return "just me"
	case 2:
		return "two of us"
	}
	return fmt.Sprintf("%d passengers", n)
}

// pickFlight searches the flights of a day, lists them, and has the user choose one with seats.
func (c *conversation) pickFlight(origin, dest, date string, ci, npax int) (flightOffer, bool) {
	res, _ := c.tool("search_direct_flights", map[string]string{"origin": origin, "destination": dest, "date": date})
	offers, _ := res.([]flightOffer)
	var ok []flightOffer
	for _, o := range offers {
		if seatsOf(o)[ci] >= npax {
			ok = append(ok, o)
		}
	}
	if len(ok) == 0 {
		res, _ := c.tool("search_connecting_flights", map[string]string{"origin": origin, "destination": dest, "date": date})
		pairs, _ := res.([][2]flightOffer)
		c.say(fmt.Sprintf("I'm sorry, there are no direct flights from %s to %s on %s with %s left in %s, and I found %s with a connection. %s",
			origin, dest, date, plural(npax, "seat", "seats"), cabinName(cabins[ci]), plural(len(pairs), "itinerary", "itineraries"), c.anythingElse()))
		c.hear(c.pick("Oh well. Never mind the booking then.", "That's a pity. Let's leave it."))
		return flightOffer{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here are the direct flights from %s to %s on %s:\n\n", origin, dest, date)
	for i, o := range ok {
		fmt.Fprintf(&b, "%d. **%s**: departs %s, arrives %s, %s %s (%d seats left)\n", i+1, o.FlightNumber, o.DepartureTime[:5], strings.TrimSuffix(o.ArrivalTime, ":00"), cabinName(cabins[ci]), money(float64(pricesOf(o)[ci])), seatsOf(o)[ci])
	}
	// Sometimes the agent also shows itineraries with a connection, for comparison.
	if c.chance(0.35) {
		res, _ := c.tool("search_connecting_flights", map[string]string{"origin": origin, "destination": dest, "date": date})
		if pairs, _ := res.([][2]flightOffer); len(pairs) > 0 {
			b.WriteString("\nWith one connection:\n")
			for _, p := range pairs[:min(len(pairs), 3)] {
				fmt.Fprintf(&b, "- **%s + %s** via %s: departs %s, arrives %s, %s %s\n", p[0].FlightNumber, p[1].FlightNumber, p[0].Destination,
					p[0].DepartureTime[:5], strings.TrimSuffix(p[1].ArrivalTime, ":00"), cabinName(cabins[ci]), money(float64(pricesOf(p[0])[ci]+pricesOf(p[1])[ci])))
			}
		}
	}
	b.WriteString("\nWhich one would you like?")
	c.say(b.String())
	choice := ok[c.rng.IntN(len(ok))]
	cheapest := slices.MinFunc(ok, func(x, y flightOffer) int { return pricesOf(x)[ci] - pricesOf(y)[ci] })
	switch {
	case len(ok) == 1:
		c.hear(c.pick("That one works.", "Okay, let's take it."))
	case c.chance(0.3):
		choice = cheapest
		c.hear(c.pick("The cheapest one, please.", "I'll take the cheapest."))
	case c.chance(0.5):
		c.hear(fmt.Sprintf("%s, please.", choice.FlightNumber))
	default:
		c.hear(fmt.Sprintf("The one leaving at %s.", choice.DepartureTime[:5]))
	}
	return choice, true
}

// authenticate asks for the user ID when the user has not given it, then reads the profile.
func (c *conversation) authenticate(opening bool) {
	if c.u != nil {
		return
	}
	if c.idGiven {
		c.readUser()
		return
	}
	c.say(c.pick("I'd be happy to help. Could you please provide your user ID?",
		"Sure! First, may I have your user ID so I can pull up your account?",
		"I can help with that. What is your user ID?"))
	c.hear(c.pick("It's ", "Sure, it's ", "My user ID is ") + c.cust.UserID + ".")
	c.readUser()
}

// cancelTrip: a cancellation, granted or refused by the rules, with a transfer when the user
// insists.
func (c *conversation) cancelTrip(opening bool) bool {
	rs := c.futureReservations(nil)
	if len(rs) == 0 {
		return false
	}
	target := rs[c.rng.IntN(len(rs))]
	described := c.describeTrip(target)
	reasons := []string{"change of plans", "health", "weather", "other"}
	reason := reasons[c.rng.IntN(len(reasons))]
	c.hear(c.lead(opening, c.pick("I need to cancel ", "I'd like to cancel ", "Please cancel ")+described+"."))
	c.authenticate(opening)
	r := c.locate(target, described)
	if r == nil {
		return true
	}
	c.say(c.listReservation(r) + "\n\nMay I ask the reason for the cancellation?")
	c.hear(map[string]string{
		"change of plans": "My plans changed, I can't make it anymore.",
		"health":          "I'm sick and my doctor told me not to travel.",
		"weather":         "There's a storm forecast and I don't want to risk it.",
		"other":           "Personal reasons, I'd rather not go into it.",
	}[reason])
	created, _ := time.Parse("2006-01-02T15:04:05", r.CreatedAt)
	var why string
	switch {
	case today.Sub(created) < 24*time.Hour:
		why = fmt.Sprintf("it was booked less than 24 hours ago (%s)", r.CreatedAt)
	case r.Cabin == "business":
		why = "it is in business class"
	case r.Insurance == "yes" && (reason == "health" || reason == "weather"):
		why = "you have the travel insurance, which covers this reason"
	}
	if why == "" {
		c.say(fmt.Sprintf("I'm sorry, but reservation %s cannot be cancelled: it was booked on %s, more than 24 hours ago, it is in %s, and %s. Under our policy I can't cancel it.",
			r.ReservationID, r.CreatedAt[:10], cabinName(r.Cabin), map[string]string{"yes": "the insurance does not cover this reason", "no": "it has no travel insurance"}[r.Insurance]))
		if c.chance(0.4) {
			c.hear(c.pick("This is ridiculous. I want to talk to a real person.", "Can I speak to a supervisor, please?"))
			c.tool("transfer_to_human_agent", map[string]string{"summary": fmt.Sprintf("User %s wants to cancel reservation %s (reason: %s); not eligible under the policy (booked %s, %s, insurance %s). User asked for a human agent.",
				c.u.UserID, r.ReservationID, reason, r.CreatedAt[:10], r.Cabin, r.Insurance)})
			c.say("You are being transferred to a human agent. Please hold on.")
			c.done = true
			return true
		}
		c.hear(c.pick("Okay, I understand. I'll keep it then.", "Fine, never mind."))
		c.say(c.anythingElse())
		return true
	}
	paid := 0.0
	for _, p := range r.PaymentHistory {
		paid += p.Amount
	}
	c.say(fmt.Sprintf("Reservation %s can be cancelled because %s. The refund of %s will go back to the original payment method within 5 to 7 business days. Do you want me to cancel it?", r.ReservationID, why, money(paid)))
	c.confirm()
	if _, err := c.tool("cancel_reservation", map[string]string{"reservation_id": r.ReservationID}); err != nil {
		c.say(fmt.Sprintf("I could not cancel it: %v.", err))
		return true
	}
	c.say(fmt.Sprintf("Reservation %s is cancelled. %s", r.ReservationID, c.anythingElse()))
	return true
}

// changeFlight moves one flight of a reservation to another day, keeping the others.
func (c *conversation) changeFlight(opening bool) bool {
	rs := c.futureReservations(func(r *reservation) bool {
		last := r.Flights[len(r.Flights)-1].Date
		return last < "2025-05-29"
	})
	if len(rs) == 0 {
		return false
	}
	target := rs[c.rng.IntN(len(rs))]
	leg := c.rng.IntN(len(target.Flights))
	old := target.Flights[leg]
	od, _ := time.Parse(dateLayout, old.Date)
	newDate := od.AddDate(0, 0, 1+c.rng.IntN(2)).Format(dateLayout)
	if leg == 0 && len(target.Flights) > 1 && newDate >= target.Flights[1].Date {
		newDate = od.AddDate(0, 0, -1).Format(dateLayout)
		if newDate <= today.Format(dateLayout) {
			return false
		}
	}
	described := c.describeTrip(target)
	which := map[bool]string{true: "outbound", false: "return"}[leg == 0]
	c.hear(c.lead(opening, fmt.Sprintf("I need to move the %s flight of %s to %s.", which, described, newDate)))
	c.authenticate(opening)
	r := c.locate(target, described)
	if r == nil {
		return true
	}
	if r.Cabin == "basic_economy" {
		c.say(fmt.Sprintf("I'm sorry, reservation %s is in basic economy, and basic economy flights cannot be changed. The cabin can be upgraded, though, after which the flights could be changed.", r.ReservationID))
		c.hear(c.pick("No thanks, I'll keep it as it is.", "Hmm, no. Leave it then."))
		c.say(c.anythingElse())
		return true
	}
	ci := slices.Index(cabins, r.Cabin)
	npax := len(r.Passengers)
	c.note(fmt.Sprintf("I found it:\n%s\n\nLet me look for flights from %s to %s on %s.", c.listReservation(r), old.Origin, old.Destination, newDate))
	chosen, ok := c.pickFlight(old.Origin, old.Destination, newDate, ci, npax)
	if !ok {
		return true
	}
	newPrice := pricesOf(chosen)[ci]
	res, err := c.tool("calculate", map[string]string{"expression": fmt.Sprintf("(%d - %d) * %d", newPrice, old.Price, npax)})
	if err != nil {
		return true
	}
	diff := res.(map[string]any)["result"].(float64)
	word := "an extra charge"
	if diff < 0 {
		word = "a refund"
	}
	c.say(fmt.Sprintf("Moving to %s on %s means %s of %s for the %s.", chosen.FlightNumber, newDate, word, money(math.Abs(diff)), plural(npax, "passenger", "passengers")))
	pm := c.choosePayment(math.Max(diff, 0), false)
	var flights []flightRef
	for i, f := range r.Flights {
		if i == leg {
			flights = append(flights, flightRef{chosen.FlightNumber, newDate})
		} else {
			flights = append(flights, flightRef{f.FlightNumber, f.Date})
		}
	}
	var lines []string
	for _, f := range flights {
		lines = append(lines, fmt.Sprintf("- %s on %s", f.FlightNumber, f.Date))
	}
	c.say(fmt.Sprintf("To confirm, the new itinerary of %s will be:\n%s\nin %s, with %s going to %s. Shall I proceed?", r.ReservationID, strings.Join(lines, "\n"), cabinName(r.Cabin), word, c.describePayment(pm)))
	c.confirm()
	if _, err := c.tool("update_reservation_flights", map[string]any{"reservation_id": r.ReservationID, "cabin": r.Cabin, "flights": flights, "payment_id": pm.ID}); err != nil {
		c.say(fmt.Sprintf("The change failed: %v. %s", err, c.anythingElse()))
		return true
	}
	c.say(fmt.Sprintf("Done: reservation %s now flies %s on %s. %s", r.ReservationID, chosen.FlightNumber, newDate, c.anythingElse()))
	return true
}

// addBaggage adds checked bags, charged above the allowance.
func (c *conversation) addBaggage(opening bool) bool {
	rs := c.futureReservations(func(r *reservation) bool { return r.TotalBaggages < maxBaggages-3 })
	if len(rs) == 0 {
		return false
	}
	target := rs[c.rng.IntN(len(rs))]
	add := 1 + c.rng.IntN(2)
	described := c.describeTrip(target)
	c.hear(c.lead(opening, fmt.Sprintf("I'd like to add %s to %s.", plural(add, "checked bag", "checked bags"), described)))
	c.authenticate(opening)
	r := c.locate(target, described)
	if r == nil {
		return true
	}
	free := freeBags(c.u.Membership, r.Cabin) * len(r.Passengers)
	total := r.TotalBaggages + add
	// Bags already paid for stay paid for, even when the allowance grew (after an upgrade).
	nonfree := max(total-free, r.NonfreeBaggages)
	fee := float64(bagFee * (nonfree - r.NonfreeBaggages))
	if fee == 0 {
		c.say(fmt.Sprintf("Reservation %s has %d checked bags and your allowance is %d free bags (%s member, %s, %s), so the %s are free. Shall I add them?",
			r.ReservationID, r.TotalBaggages, free, c.u.Membership, cabinName(r.Cabin), plural(len(r.Passengers), "passenger", "passengers"), plural(add, "extra bag", "extra bags")))
		c.confirm()
		c.tool("update_reservation_baggage", map[string]any{"reservation_id": r.ReservationID, "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": c.u.PaymentMethods[0].ID})
		c.say(fmt.Sprintf("Done, reservation %s now has %d checked bags. %s", r.ReservationID, total, c.anythingElse()))
		return true
	}
	paidFor := ""
	if r.NonfreeBaggages > 0 {
		paidFor = fmt.Sprintf(" (%d already paid)", r.NonfreeBaggages)
	}
	c.say(fmt.Sprintf("Reservation %s has %d checked bags and an allowance of %d free bags for %s. With %d bags, %d will be charged at $%d each%s, so %s more.",
		r.ReservationID, r.TotalBaggages, free, plural(len(r.Passengers), "passenger", "passengers"), total, nonfree, bagFee, paidFor, money(fee)))
	pm := c.choosePayment(fee, false)
	c.say(fmt.Sprintf("I'll add the bags to %s and charge %s to %s. Shall I go ahead?", r.ReservationID, money(fee), c.describePayment(pm)))
	c.confirm()
	if _, err := c.tool("update_reservation_baggage", map[string]any{"reservation_id": r.ReservationID, "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": pm.ID}); err != nil {
		c.say(fmt.Sprintf("That did not work: %v. %s", err, c.anythingElse()))
		return true
	}
	c.say(fmt.Sprintf("The bags are added; reservation %s now has %d checked bags. %s", r.ReservationID, total, c.anythingElse()))
	return true
}

// fixPassenger corrects a passenger's name or date of birth.
func (c *conversation) fixPassenger(opening bool) bool {
	rs := c.futureReservations(func(r *reservation) bool { return len(r.Passengers) > 1 })
	if len(rs) == 0 {
		return false
	}
	target := rs[c.rng.IntN(len(rs))]
	i := 1 + c.rng.IntN(len(target.Passengers)-1)
	p := target.Passengers[i]
	fixed := p
	var what string
	if c.chance(0.5) {
		fixed.FirstName = firstNames[c.rng.IntN(len(firstNames))]
		what = fmt.Sprintf("the first name of %s %s is wrong, it should be %s", p.FirstName, p.LastName, fixed.FirstName)
	} else {
		t, _ := time.Parse(dateLayout, p.DOB)
		fixed.DOB = t.AddDate(0, 0, 1+c.rng.IntN(40)).Format(dateLayout)
		what = fmt.Sprintf("the date of birth of %s %s should be %s", p.FirstName, p.LastName, fixed.DOB)
	}
	described := c.describeTrip(target)
	c.hear(c.lead(opening, fmt.Sprintf("On %s, %s.", described, what)))
	c.authenticate(opening)
	r := c.locate(target, described)
	if r == nil {
		return true
	}
	pax := slices.Clone(r.Passengers)
	for j := range pax {
		if pax[j] == p {
			pax[j] = fixed
		}
	}
	c.say(fmt.Sprintf("I'll update passenger %d of reservation %s to %s %s, born %s. Is that right?", i+1, r.ReservationID, fixed.FirstName, fixed.LastName, fixed.DOB))
	c.confirm()
	c.tool("update_reservation_passengers", map[string]any{"reservation_id": r.ReservationID, "passengers": pax})
	c.say(fmt.Sprintf("The passenger details of %s are updated. %s", r.ReservationID, c.anythingElse()))
	return true
}

// disrupted finds a flight of the customer's that was cancelled or delayed.
func (c *conversation) disrupted() (*reservation, resFlight, string, bool) {
	for _, id := range c.cust.Reservations {
		r := c.al.reservations[id]
		for _, f := range r.Flights {
			fd := c.al.days[f.FlightNumber][f.Date]
			sched := c.al.flights[f.FlightNumber].Departure
			switch {
			case fd.Status == "cancelled":
				return r, f, "cancelled", true
			case fd.Status == "delayed", fd.ActualDeparture != "" && fd.ActualDeparture > shiftTime(sched, 25):
				return r, f, "delayed", true
			}
		}
	}
	return nil, resFlight{}, "", false
}

// complain: a delayed or cancelled flight, checked, then compensated or not by the rules.
func (c *conversation) complain(opening bool) bool {
	target, f, what, ok := c.disrupted()
	if !ok {
		return false
	}
	mention := fmt.Sprintf("my flight from %s to %s on %s", c.airportName(f.Origin), c.airportName(f.Destination), prettyDate(f.Date))
	c.hear(c.lead(opening, c.pick(
		fmt.Sprintf("I'm really frustrated: %s was %s.", mention, what),
		fmt.Sprintf("%s was %s and it ruined my plans.", strings.ToUpper(mention[:1])+mention[1:], what))))
	c.authenticate(opening)
	r := c.findReservation(func(x *reservation) bool { return x.ReservationID == target.ReservationID })
	if r == nil {
		return true
	}
	st, err := c.tool("get_flight_status", map[string]string{"flight_number": f.FlightNumber, "date": f.Date})
	if err != nil {
		return true
	}
	status := st.(flightStatus)
	c.say(fmt.Sprintf("I'm sorry about that. I can see that flight %s on %s (reservation %s) has the status \"%s\"%s.", f.FlightNumber, f.Date, r.ReservationID, status.Status,
		map[bool]string{true: fmt.Sprintf(", departing at %s instead of %s", status.ActualDeparture, status.ScheduledDeparture), false: ""}[status.ActualDeparture != ""]))
	c.hear(c.pick("Can I get some compensation for this?", "I think I deserve some compensation.", "What are you going to do about it?"))
	eligible := c.u.Membership != "regular" || r.Insurance == "yes" || r.Cabin == "business"
	if !eligible {
		c.say(fmt.Sprintf("I understand your frustration. Unfortunately, as a regular member traveling in %s without travel insurance, you are not eligible for compensation under our policy. %s", cabinName(r.Cabin), c.anythingElse()))
		c.hear(c.pick("That's disappointing.", "Fine."))
		return true
	}
	per := certificateDelayed
	if what == "cancelled" {
		per = certificateCancelled
	}
	amount := per * len(r.Passengers)
	c.say(fmt.Sprintf("As a gesture of goodwill I can send you a travel certificate of %s ($%d for each of the %s). Would you like me to do that?", money(float64(amount)), per, plural(len(r.Passengers), "passenger", "passengers")))
	c.confirm()
	if _, err := c.tool("send_certificate", map[string]any{"user_id": c.u.UserID, "amount": amount}); err != nil {
		return true
	}
	c.say(fmt.Sprintf("The certificate of %s has been added to your account. %s", money(float64(amount)), c.anythingElse()))
	return true
}

// upgrade changes the cabin of a reservation, priced at today's fares of its flights.
func (c *conversation) upgrade(opening bool) bool {
	rs := c.futureReservations(func(r *reservation) bool { return r.Cabin != "business" })
	if len(rs) == 0 {
		return false
	}
	target := rs[c.rng.IntN(len(rs))]
	cabin := "business"
	if target.Cabin == "basic_economy" && c.chance(0.5) {
		cabin = "economy"
	}
	described := c.describeTrip(target)
	c.hear(c.lead(opening, fmt.Sprintf("I'd like to upgrade %s to %s. How much would that be?", described, cabinName(cabin))))
	c.authenticate(opening)
	r := c.locate(target, described)
	if r == nil {
		return true
	}
	ci := slices.Index(cabins, cabin)
	var terms []string
	for _, f := range r.Flights {
		res, _ := c.tool("search_direct_flights", map[string]string{"origin": f.Origin, "destination": f.Destination, "date": f.Date})
		offers, _ := res.([]flightOffer)
		i := slices.IndexFunc(offers, func(o flightOffer) bool { return o.FlightNumber == f.FlightNumber })
		if i < 0 || seatsOf(offers[i])[ci] < len(r.Passengers) {
			c.say(fmt.Sprintf("I'm sorry, flight %s on %s has no %s seats left for all passengers, so the upgrade is not possible. %s", f.FlightNumber, f.Date, cabinName(cabin), c.anythingElse()))
			c.hear(c.pick("Too bad.", "Okay."))
			return true
		}
		terms = append(terms, fmt.Sprintf("(%d - %d)", pricesOf(offers[i])[ci], f.Price))
	}
	res, err := c.tool("calculate", map[string]string{"expression": fmt.Sprintf("(%s) * %d", strings.Join(terms, " + "), len(r.Passengers))})
	if err != nil {
		return true
	}
	diff := res.(map[string]any)["result"].(float64)
	c.say(fmt.Sprintf("Upgrading reservation %s to %s for %s costs %s in total.", r.ReservationID, cabinName(cabin), plural(len(r.Passengers), "passenger", "passengers"), money(diff)))
	pm := c.choosePayment(math.Max(diff, 0), false)
	c.say(fmt.Sprintf("So: reservation %s, all flights in %s, %s charged to %s. Shall I proceed?", r.ReservationID, cabinName(cabin), money(diff), c.describePayment(pm)))
	c.confirm()
	var flights []flightRef
	for _, f := range r.Flights {
		flights = append(flights, flightRef{f.FlightNumber, f.Date})
	}
	if _, err := c.tool("update_reservation_flights", map[string]any{"reservation_id": r.ReservationID, "cabin": cabin, "flights": flights, "payment_id": pm.ID}); err != nil {
		c.say(fmt.Sprintf("The upgrade failed: %v. %s", err, c.anythingElse()))
		return true
	}
	c.say(fmt.Sprintf("Your reservation %s is now in %s. %s", r.ReservationID, cabinName(cabin), c.anythingElse()))
	return true
}

// flightStatusQuestion: the status of a flight of one of the user's trips.
func (c *conversation) flightStatusQuestion(opening bool) bool {
	var f resFlight
	found := false
	for _, id := range c.cust.Reservations {
		r := c.al.reservations[id]
		if r.Status != "cancelled" && r.Flights[0].Date >= today.Format(dateLayout) {
			f, found = r.Flights[0], true
			break
		}
	}
	if !found {
		return false
	}
	c.hear(c.lead(opening, fmt.Sprintf("Is flight %s on %s on time?", f.FlightNumber, f.Date)))
	st, err := c.tool("get_flight_status", map[string]string{"flight_number": f.FlightNumber, "date": f.Date})
	if err != nil {
		return false
	}
	s := st.(flightStatus)
	c.say(fmt.Sprintf("Flight %s from %s to %s on %s has the status \"%s\"; it is scheduled to depart at %s and arrive at %s. %s", s.FlightNumber, s.Origin, s.Destination, s.Date, s.Status, s.ScheduledDeparture[:5], s.ScheduledArrival[:5], c.anythingElse()))
	return true
}
