package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The service agent's tools: their OpenAI function schemas and their implementation on the
// airline's state. Reads return the state as JSON; writes check the policy's hard rules,
// change the state and return what they changed.

type toolSchema struct {
	Type     string       `json:"type"`
	Function toolFuncSpec `json:"function"`
}

type toolFuncSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

func object(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}
func number(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }
func enum(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "description": desc, "enum": values}
}
func array(desc string, items map[string]any) map[string]any {
	return map[string]any{"type": "array", "description": desc, "items": items}
}

var (
	flightRefSchema = object([]string{"flight_number", "date"}, map[string]any{
		"flight_number": str("Flight number, such as 'QV417'."),
		"date":          str("Date of the flight, in the format 'YYYY-MM-DD', such as '2025-05-20'."),
	})
	passengerSchema = object([]string{"first_name", "last_name", "dob"}, map[string]any{
		"first_name": str("First name of the passenger, such as 'Mia'."),
		"last_name":  str("Last name of the passenger, such as 'Li'."),
		"dob":        str("Date of birth of the passenger, in the format 'YYYY-MM-DD'."),
	})
)

// airlineTools are the 14 tools of the service agent.
func airlineTools() []toolSchema {
	tool := func(name, desc string, params map[string]any) toolSchema {
		return toolSchema{Type: "function", Function: toolFuncSpec{Name: name, Description: desc, Parameters: params}}
	}
	userID := str("The user's ID, such as 'mia_li_3668'.")
	resID := str("The reservation ID, such as '4WQ1VK'.")
	return []toolSchema{
		tool("get_user_details", "Get the profile of a user: name, address, membership, payment methods with their balances, saved passengers and reservation IDs.",
			object([]string{"user_id"}, map[string]any{"user_id": userID})),
		tool("get_reservation_details", "Get the details of a reservation: flights, passengers, cabin, baggage, insurance and payment history.",
			object([]string{"reservation_id"}, map[string]any{"reservation_id": resID})),
		tool("list_airports", "List the airports the airline flies to, with their IATA codes and cities.", object(nil, map[string]any{})),
		tool("search_direct_flights", "Search the direct flights between two airports on a date that can still be booked.",
			object([]string{"origin", "destination", "date"}, map[string]any{
				"origin":      str("IATA code of the departure airport, such as 'JFK'."),
				"destination": str("IATA code of the arrival airport, such as 'SEA'."),
				"date":        str("Date of the flight, in the format 'YYYY-MM-DD'."),
			})),
		tool("search_connecting_flights", "Search itineraries with one connection between two airports, departing on a date.",
			object([]string{"origin", "destination", "date"}, map[string]any{
				"origin":      str("IATA code of the departure airport, such as 'JFK'."),
				"destination": str("IATA code of the arrival airport, such as 'SEA'."),
				"date":        str("Date of the first flight, in the format 'YYYY-MM-DD'."),
			})),
		tool("get_flight_status", "Get the status of a flight on a date: available, on time, delayed, flying, landed or cancelled, with actual times when known.",
			object([]string{"flight_number", "date"}, map[string]any{
				"flight_number": str("Flight number, such as 'QV417'."),
				"date":          str("Date of the flight, in the format 'YYYY-MM-DD'."),
			})),
		tool("calculate", "Evaluate an arithmetic expression with numbers, +, -, *, / and parentheses.",
			object([]string{"expression"}, map[string]any{"expression": str("The expression, such as '2 * (154 + 30)'.")})),
		tool("book_reservation", "Book a reservation for a user and charge its price to the user's payment methods.",
			object([]string{"user_id", "origin", "destination", "flight_type", "cabin", "flights", "passengers", "payment_methods", "total_baggages", "nonfree_baggages", "insurance"}, map[string]any{
				"user_id":     userID,
				"origin":      str("IATA code of the origin of the trip, such as 'JFK'."),
				"destination": str("IATA code of the destination of the trip, such as 'SEA'."),
				"flight_type": enum("Type of the trip.", "one_way", "round_trip"),
				"cabin":       enum("Cabin class, the same for every flight.", cabins...),
				"flights":     array("Every flight of the trip, outbound and return, in order.", flightRefSchema),
				"passengers":  array("The passengers, at most five.", passengerSchema),
				"payment_methods": array("How the price is paid: payment methods of the user and the amount charged to each; the amounts must add up to the total price.",
					object([]string{"payment_id", "amount"}, map[string]any{
						"payment_id": str("ID of a payment method of the user, such as 'credit_card_4421538' or 'gift_card_7815826'."),
						"amount":     number("Amount charged to this payment method."),
					})),
				"total_baggages":   integer("Total number of checked bags of the reservation."),
				"nonfree_baggages": integer("Number of checked bags above the free allowance, charged."),
				"insurance":        enum("Whether the travel insurance is bought.", "yes", "no"),
			})),
		tool("cancel_reservation", "Cancel a whole reservation and refund it to the original payment methods.",
			object([]string{"reservation_id"}, map[string]any{"reservation_id": resID})),
		tool("update_reservation_flights", "Change the flights or the cabin of a reservation. Give every flight of the new itinerary, also those that do not change. The price difference is charged to or refunded on the payment method.",
			object([]string{"reservation_id", "cabin", "flights", "payment_id"}, map[string]any{
				"reservation_id": resID,
				"cabin":          enum("Cabin class of the new itinerary.", cabins...),
				"flights":        array("Every flight of the new itinerary.", flightRefSchema),
				"payment_id":     str("ID of the payment method for the price difference, such as 'credit_card_4421538'."),
			})),
		tool("update_reservation_passengers", "Change the details of the passengers of a reservation; their number cannot change.",
			object([]string{"reservation_id", "passengers"}, map[string]any{
				"reservation_id": resID,
				"passengers":     array("Every passenger of the reservation, in order, with the changes.", passengerSchema),
			})),
		tool("update_reservation_baggage", "Add checked bags to a reservation; the bags above the free allowance are charged to the payment method.",
			object([]string{"reservation_id", "total_baggages", "nonfree_baggages", "payment_id"}, map[string]any{
				"reservation_id":   resID,
				"total_baggages":   integer("New total number of checked bags."),
				"nonfree_baggages": integer("New number of checked bags above the free allowance."),
				"payment_id":       str("ID of the payment method for the bag fees, such as 'gift_card_7815826'."),
			})),
		tool("send_certificate", "Send a travel certificate, as a goodwill gesture, to a user.",
			object([]string{"user_id", "amount"}, map[string]any{"user_id": userID, "amount": number("Amount of the certificate in dollars.")})),
		tool("transfer_to_human_agent", "Hand the conversation over to a human agent, with a summary of the user's request. Use it only when the policy says so.",
			object([]string{"summary"}, map[string]any{"summary": str("A summary of the user's request and what was done.")})),
	}
}

// toolError is a refusal of a tool: the call reached the tool, which declined it.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &toolError{fmt.Sprintf(format, args...)} }

// call runs a tool on the state. The result is what the tool returns as JSON, or a refusal.
func (al *airline) call(name string, args map[string]any, now time.Time) (any, error) {
	s := func(k string) string { v, _ := args[k].(string); return v }
	n := func(k string) float64 {
		switch v := args[k].(type) {
		case float64:
			return v
		case int:
			return float64(v)
		}
		return 0
	}
	switch name {
	case "get_user_details":
		u := al.users[s("user_id")]
		if u == nil {
			return nil, refuse("user not found")
		}
		return u, nil
	case "get_reservation_details":
		r := al.reservations[s("reservation_id")]
		if r == nil {
			return nil, refuse("reservation not found")
		}
		return r, nil
	case "list_airports":
		return airports, nil
	case "search_direct_flights":
		return al.searchDirect(s("origin"), s("destination"), s("date")), nil
	case "search_connecting_flights":
		return al.searchConnecting(s("origin"), s("destination"), s("date")), nil
	case "get_flight_status":
		return al.flightStatus(s("flight_number"), s("date"))
	case "calculate":
		v, err := calculate(s("expression"))
		if err != nil {
			return nil, refuse("%v", err)
		}
		return map[string]any{"expression": s("expression"), "result": v}, nil
	case "book_reservation":
		return al.book(args, now)
	case "cancel_reservation":
		return al.cancel(s("reservation_id"))
	case "update_reservation_flights":
		return al.updateFlights(s("reservation_id"), s("cabin"), flightRefs(args["flights"]), s("payment_id"))
	case "update_reservation_passengers":
		return al.updatePassengers(s("reservation_id"), persons(args["passengers"]))
	case "update_reservation_baggage":
		return al.updateBaggage(s("reservation_id"), int(n("total_baggages")), int(n("nonfree_baggages")), s("payment_id"))
	case "send_certificate":
		u := al.users[s("user_id")]
		if u == nil {
			return nil, refuse("user not found")
		}
		id := al.newID("certificate_", 7)
		u.PaymentMethods = append(u.PaymentMethods, paymentMethod{Source: "certificate", ID: id, Amount: n("amount")})
		return map[string]any{"message": fmt.Sprintf("Certificate %s added to user %s with amount %s.", id, u.UserID, money(n("amount")))}, nil
	case "transfer_to_human_agent":
		return map[string]any{"message": "Transfer successful"}, nil
	}
	return nil, refuse("unknown tool %q", name)
}

// toolContent is a tool message's content: the result as JSON, or the refusal.
func toolContent(result any, err error) string {
	if err != nil {
		var te *toolError
		if !errors.As(err, &te) {
			panic(err) // the tools only refuse
		}
		b, _ := json.Marshal(map[string]string{"error": te.msg})
		return string(b)
	}
	b, err := json.Marshal(result)
	if err != nil {
		panic(err) // the results are plain data
	}
	return string(b)
}

type flightRef struct {
	FlightNumber string `json:"flight_number"`
	Date         string `json:"date"`
}

func flightRefs(v any) []flightRef {
	var out []flightRef
	list, _ := v.([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		num, _ := m["flight_number"].(string)
		date, _ := m["date"].(string)
		out = append(out, flightRef{num, date})
	}
	return out
}

func persons(v any) []person {
	var out []person
	list, _ := v.([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		f, _ := m["first_name"].(string)
		l, _ := m["last_name"].(string)
		d, _ := m["dob"].(string)
		out = append(out, person{f, l, d})
	}
	return out
}

type cabinInts struct {
	BasicEconomy int `json:"basic_economy"`
	Economy      int `json:"economy"`
	Business     int `json:"business"`
}

func toCabinInts(v [3]int) cabinInts { return cabinInts{v[0], v[1], v[2]} }

type flightOffer struct {
	FlightNumber   string    `json:"flight_number"`
	Origin         string    `json:"origin"`
	Destination    string    `json:"destination"`
	Date           string    `json:"date"`
	DepartureTime  string    `json:"scheduled_departure_time_est"`
	ArrivalTime    string    `json:"scheduled_arrival_time_est"`
	Status         string    `json:"status"`
	AvailableSeats cabinInts `json:"available_seats"`
	Prices         cabinInts `json:"prices"`
}

func (al *airline) offer(f *scheduledFlight, date string) (flightOffer, bool) {
	fd := al.days[f.Number][date]
	if fd == nil || fd.Status != "available" {
		return flightOffer{}, false
	}
	arr := f.Arrival
	if f.NextDay {
		arr += "+1"
	}
	return flightOffer{FlightNumber: f.Number, Origin: f.Origin, Destination: f.Destination, Date: date,
		DepartureTime: f.Departure, ArrivalTime: arr, Status: fd.Status,
		AvailableSeats: toCabinInts(fd.Seats), Prices: toCabinInts(fd.Prices)}, true
}

func (al *airline) searchDirect(origin, destination, date string) []flightOffer {
	out := []flightOffer{}
	for _, f := range al.directFlights(origin, destination) {
		if o, ok := al.offer(f, date); ok {
			out = append(out, o)
		}
	}
	return out
}

// searchConnecting pairs a flight from origin with a flight to destination leaving the
// connecting airport at least an hour after it lands, the same day or the next.
func (al *airline) searchConnecting(origin, destination, date string) [][2]flightOffer {
	out := [][2]flightOffer{}
	d0, err := time.Parse(dateLayout, date)
	if err != nil {
		return out
	}
	for _, num := range al.flightOrder {
		f1 := al.flights[num]
		if f1.Origin != origin || f1.Destination == destination {
			continue
		}
		o1, ok := al.offer(f1, date)
		if !ok {
			continue
		}
		arr := minutesOf(f1.Arrival)
		if f1.NextDay {
			arr += 24 * 60
		}
		for _, f2 := range al.directFlights(f1.Destination, destination) {
			dep := minutesOf(f2.Departure)
			var d2 string
			switch {
			case dep >= arr+60:
				d2 = date
			case dep+24*60 >= arr+60 && dep+24*60 <= arr+12*60:
				d2 = d0.AddDate(0, 0, 1).Format(dateLayout)
			default:
				continue
			}
			if o2, ok := al.offer(f2, d2); ok {
				out = append(out, [2]flightOffer{o1, o2})
			}
		}
		if len(out) >= 5 {
			break
		}
	}
	return out
}

func minutesOf(hms string) int {
	t, _ := time.Parse("15:04:05", hms)
	return t.Hour()*60 + t.Minute()
}

type flightStatus struct {
	FlightNumber       string `json:"flight_number"`
	Date               string `json:"date"`
	Origin             string `json:"origin"`
	Destination        string `json:"destination"`
	Status             string `json:"status"`
	ScheduledDeparture string `json:"scheduled_departure_time_est"`
	ScheduledArrival   string `json:"scheduled_arrival_time_est"`
	ActualDeparture    string `json:"actual_departure_time_est,omitempty"`
	ActualArrival      string `json:"actual_arrival_time_est,omitempty"`
}

func (al *airline) flightStatus(number, date string) (any, error) {
	f := al.flights[number]
	if f == nil {
		return nil, refuse("flight %s not found", number)
	}
	fd := al.days[number][date]
	if fd == nil {
		return nil, refuse("flight %s does not operate on %s", number, date)
	}
	st := fd.Status
	if st == "landed" && fd.ActualDeparture != "" && fd.ActualDeparture > shiftTime(f.Departure, 25) {
		st = "landed (delayed)"
	}
	return flightStatus{FlightNumber: number, Date: date, Origin: f.Origin, Destination: f.Destination, Status: st,
		ScheduledDeparture: f.Departure, ScheduledArrival: f.Arrival, ActualDeparture: fd.ActualDeparture, ActualArrival: fd.ActualArrival}, nil
}

// priceOf is the current price of a flight in a cabin, and whether it can be booked for n passengers.
func (al *airline) priceOf(ref flightRef, cabin string, n int) (int, error) {
	f := al.flights[ref.FlightNumber]
	if f == nil {
		return 0, refuse("flight %s not found", ref.FlightNumber)
	}
	fd := al.days[ref.FlightNumber][ref.Date]
	ci := slices.Index(cabins, cabin)
	switch {
	case fd == nil:
		return 0, refuse("flight %s does not operate on %s", ref.FlightNumber, ref.Date)
	case fd.Status != "available":
		return 0, refuse("flight %s on %s cannot be booked: %s", ref.FlightNumber, ref.Date, fd.Status)
	case ci < 0:
		return 0, refuse("unknown cabin %q", cabin)
	case fd.Seats[ci] < n:
		return 0, refuse("not enough seats in %s on flight %s on %s", cabin, ref.FlightNumber, ref.Date)
	}
	return fd.Prices[ci], nil
}

func (al *airline) paymentOf(u *user, id string) (*paymentMethod, error) {
	for i := range u.PaymentMethods {
		if u.PaymentMethods[i].ID == id {
			return &u.PaymentMethods[i], nil
		}
	}
	return nil, refuse("payment method %s not found for user %s", id, u.UserID)
}

// charge takes amount from a payment method (a negative amount refunds). Gift cards and
// certificates pay from their balance; a certificate is used up whole.
func (al *airline) charge(u *user, id string, amount float64) error {
	pm, err := al.paymentOf(u, id)
	if err != nil {
		return err
	}
	if pm.Source == "credit_card" {
		return nil
	}
	if amount > pm.Amount+1e-9 {
		return refuse("%s %s has a balance of %s, less than %s", strings.ReplaceAll(pm.Source, "_", " "), id, money(pm.Amount), money(amount))
	}
	if pm.Source == "certificate" && amount > 0 {
		u.PaymentMethods = slices.DeleteFunc(u.PaymentMethods, func(p paymentMethod) bool { return p.ID == id })
		return nil
	}
	pm.Amount = math.Round((pm.Amount-amount)*100) / 100
	return nil
}

func (al *airline) book(args map[string]any, now time.Time) (any, error) {
	u := al.users[stringArg(args, "user_id")]
	if u == nil {
		return nil, refuse("user not found")
	}
	refs := flightRefs(args["flights"])
	pax := persons(args["passengers"])
	cabin := stringArg(args, "cabin")
	switch {
	case len(refs) == 0:
		return nil, refuse("no flights")
	case len(pax) == 0 || len(pax) > 5:
		return nil, refuse("a reservation has one to five passengers")
	}
	r := &reservation{UserID: u.UserID, Origin: stringArg(args, "origin"), Destination: stringArg(args, "destination"),
		FlightType: stringArg(args, "flight_type"), Cabin: cabin, Passengers: pax, Insurance: stringArg(args, "insurance")}
	total := 0
	for _, ref := range refs {
		p, err := al.priceOf(ref, cabin, len(pax))
		if err != nil {
			return nil, err
		}
		f := al.flights[ref.FlightNumber]
		r.Flights = append(r.Flights, resFlight{Origin: f.Origin, Destination: f.Destination, FlightNumber: f.Number, Date: ref.Date, Price: p})
		total += p * len(pax)
	}
	r.TotalBaggages = int(numberArg(args, "total_baggages"))
	r.NonfreeBaggages = int(numberArg(args, "nonfree_baggages"))
	if r.Insurance == "yes" {
		total += insurancePrice * len(pax)
	}
	total += bagFee * r.NonfreeBaggages
	var pays []payment
	paid := 0.0
	list, _ := args["payment_methods"].([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		id, _ := m["payment_id"].(string)
		amount, _ := m["amount"].(float64)
		if _, err := al.paymentOf(u, id); err != nil {
			return nil, err
		}
		pays = append(pays, payment{id, amount})
		paid += amount
	}
	if math.Abs(paid-float64(total)) > 0.005 {
		return nil, refuse("the payments add up to %s but the total price is %s", money(paid), money(float64(total)))
	}
	for _, p := range pays {
		if err := al.charge(u, p.PaymentID, p.Amount); err != nil {
			return nil, err
		}
	}
	ci := slices.Index(cabins, cabin)
	for _, ref := range refs {
		al.days[ref.FlightNumber][ref.Date].Seats[ci] -= len(pax)
	}
	r.ReservationID = al.newReservationID()
	r.PaymentHistory = pays
	r.CreatedAt = now.Format("2006-01-02T15:04:05")
	al.reservations[r.ReservationID] = r
	u.Reservations = append(u.Reservations, r.ReservationID)
	return r, nil
}

func (al *airline) cancel(id string) (any, error) {
	r := al.reservations[id]
	switch {
	case r == nil:
		return nil, refuse("reservation not found")
	case r.Status == "cancelled":
		return nil, refuse("reservation %s is already cancelled", id)
	}
	u := al.users[r.UserID]
	for _, p := range slices.Clone(r.PaymentHistory) {
		if p.Amount <= 0 {
			continue
		}
		if pm, err := al.paymentOf(u, p.PaymentID); err == nil && pm.Source == "gift_card" {
			pm.Amount += p.Amount
		}
		r.PaymentHistory = append(r.PaymentHistory, payment{p.PaymentID, -p.Amount})
	}
	ci := slices.Index(cabins, r.Cabin)
	for _, f := range r.Flights {
		if fd := al.days[f.FlightNumber][f.Date]; fd != nil && fd.Status == "available" {
			fd.Seats[ci] += len(r.Passengers)
		}
	}
	r.Status = "cancelled"
	return r, nil
}

func (al *airline) updateFlights(id, cabin string, refs []flightRef, paymentID string) (any, error) {
	r := al.reservations[id]
	switch {
	case r == nil:
		return nil, refuse("reservation not found")
	case r.Status == "cancelled":
		return nil, refuse("reservation %s is cancelled", id)
	case len(refs) == 0:
		return nil, refuse("no flights")
	}
	u := al.users[r.UserID]
	old := 0
	for _, f := range r.Flights {
		old += f.Price * len(r.Passengers)
	}
	var flights []resFlight
	total := 0
	for _, ref := range refs {
		var p int
		keep := slices.IndexFunc(r.Flights, func(f resFlight) bool { return f.FlightNumber == ref.FlightNumber && f.Date == ref.Date })
		if keep >= 0 && cabin == r.Cabin {
			p = r.Flights[keep].Price
		} else {
			var err error
			if p, err = al.priceOf(ref, cabin, len(r.Passengers)); err != nil {
				return nil, err
			}
		}
		f := al.flights[ref.FlightNumber]
		flights = append(flights, resFlight{Origin: f.Origin, Destination: f.Destination, FlightNumber: f.Number, Date: ref.Date, Price: p})
		total += p * len(r.Passengers)
	}
	diff := float64(total - old)
	if err := al.charge(u, paymentID, diff); err != nil {
		return nil, err
	}
	r.Flights, r.Cabin = flights, cabin
	r.PaymentHistory = append(r.PaymentHistory, payment{paymentID, diff})
	return r, nil
}

func (al *airline) updatePassengers(id string, pax []person) (any, error) {
	r := al.reservations[id]
	switch {
	case r == nil:
		return nil, refuse("reservation not found")
	case len(pax) != len(r.Passengers):
		return nil, refuse("the number of passengers cannot change")
	}
	r.Passengers = pax
	return r, nil
}

func (al *airline) updateBaggage(id string, total, nonfree int, paymentID string) (any, error) {
	r := al.reservations[id]
	switch {
	case r == nil:
		return nil, refuse("reservation not found")
	case total < r.TotalBaggages || nonfree < r.NonfreeBaggages:
		return nil, refuse("checked bags cannot be removed")
	case total > maxBaggages:
		return nil, refuse("at most %d checked bags", maxBaggages)
	}
	fee := float64(bagFee * (nonfree - r.NonfreeBaggages))
	if fee > 0 {
		if err := al.charge(al.users[r.UserID], paymentID, fee); err != nil {
			return nil, err
		}
		r.PaymentHistory = append(r.PaymentHistory, payment{paymentID, fee})
	}
	r.TotalBaggages, r.NonfreeBaggages = total, nonfree
	return r, nil
}

func stringArg(args map[string]any, k string) string { v, _ := args[k].(string); return v }
func numberArg(args map[string]any, k string) float64 {
	v, _ := args[k].(float64)
	return v
}

// money spells an amount of dollars: "$45" or "$45.50".
func money(v float64) string {
	if v == math.Trunc(v) {
		return "$" + strconv.FormatFloat(v, 'f', 0, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}

// calculate evaluates + - * / and parentheses over decimal numbers, rounded to cents.
func calculate(expr string) (float64, error) {
	p := &calcParser{s: strings.ReplaceAll(expr, " ", "")}
	v, err := p.sum()
	if err != nil {
		return 0, err
	}
	if p.i != len(p.s) {
		return 0, fmt.Errorf("unexpected %q in expression", p.s[p.i:])
	}
	return math.Round(v*100) / 100, nil
}

type calcParser struct {
	s string
	i int
}

func (p *calcParser) sum() (float64, error) {
	v, err := p.product()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.product(); op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return v, err
}

func (p *calcParser) product() (float64, error) {
	v, err := p.factor()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '*' || p.s[p.i] == '/') {
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.factor(); err != nil {
			break
		}
		if op == '*' {
			v *= w
		} else if w == 0 {
			err = errors.New("division by zero")
		} else {
			v /= w
		}
	}
	return v, err
}

func (p *calcParser) factor() (float64, error) {
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
		v, err := p.factor()
		return -v, err
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		v, err := p.sum()
		if err != nil {
			return 0, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return 0, errors.New("missing )")
		}
		p.i++
		return v, nil
	}
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
		p.i++
	}
	if start == p.i {
		return 0, errors.New("expected a number")
	}
	return strconv.ParseFloat(p.s[start:p.i], 64)
}
