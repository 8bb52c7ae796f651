package corpus

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The service sessions' domain: an airline's users, flights and reservations, generated from the
// seed and changed by the write tools as the conversations go.

// today is the date the service agent works on: the policy's "current time".
var today = time.Date(2025, time.May, 15, 15, 0, 0, 0, time.UTC)

const dateLayout = "2006-01-02"

type airport struct {
	IATA string `json:"iata"`
	City string `json:"city"`
}

var airports = []airport{
	{"ATL", "Atlanta"}, {"BOS", "Boston"}, {"CLT", "Charlotte"}, {"DEN", "Denver"}, {"DFW", "Dallas-Fort Worth"},
	{"DTW", "Detroit"}, {"EWR", "Newark"}, {"IAH", "Houston"}, {"JFK", "New York"}, {"LAS", "Las Vegas"},
	{"LAX", "Los Angeles"}, {"MCO", "Orlando"}, {"MIA", "Miami"}, {"MSP", "Minneapolis"}, {"ORD", "Chicago"},
	{"PHL", "Philadelphia"}, {"PHX", "Phoenix"}, {"SEA", "Seattle"}, {"SFO", "San Francisco"}, {"LGA", "New York"},
}

var cabins = []string{"basic_economy", "economy", "business"}

// scheduledFlight is a flight of the timetable: it flies every day.
type scheduledFlight struct {
	Number      string
	Origin      string
	Destination string
	Departure   string // "15:05:00"
	Arrival     string // "19:40:00"; "+1" when the next day
	NextDay     bool
	basePrice   [3]int
}

// flightDay is one flight on one date.
type flightDay struct {
	Status string // available, delayed, on time, cancelled, landed, flying
	Seats  [3]int
	Prices [3]int
	// Actual times of past flights.
	ActualDeparture, ActualArrival string
}

type person struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	DOB       string `json:"dob"`
}

type address struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	State    string `json:"state"`
	Zip      string `json:"zip"`
}

type paymentMethod struct {
	Source   string  `json:"source"` // credit_card, gift_card, certificate
	ID       string  `json:"id"`
	Brand    string  `json:"brand,omitempty"`
	LastFour string  `json:"last_four,omitempty"`
	Amount   float64 `json:"amount,omitempty"` // balance of gift cards and certificates
}

type user struct {
	UserID          string          `json:"user_id"`
	Name            nameOf          `json:"name"`
	Address         address         `json:"address"`
	Email           string          `json:"email"`
	DOB             string          `json:"dob"`
	Membership      string          `json:"membership"`
	PaymentMethods  []paymentMethod `json:"payment_methods"`
	SavedPassengers []person        `json:"saved_passengers"`
	Reservations    []string        `json:"reservations"`
}

type nameOf struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

type resFlight struct {
	Origin       string `json:"origin"`
	Destination  string `json:"destination"`
	FlightNumber string `json:"flight_number"`
	Date         string `json:"date"`
	Price        int    `json:"price"`
}

type payment struct {
	PaymentID string  `json:"payment_id"`
	Amount    float64 `json:"amount"`
}

type reservation struct {
	ReservationID   string      `json:"reservation_id"`
	UserID          string      `json:"user_id"`
	Origin          string      `json:"origin"`
	Destination     string      `json:"destination"`
	FlightType      string      `json:"flight_type"`
	Cabin           string      `json:"cabin"`
	Flights         []resFlight `json:"flights"`
	Passengers      []person    `json:"passengers"`
	PaymentHistory  []payment   `json:"payment_history"`
	CreatedAt       string      `json:"created_at"`
	TotalBaggages   int         `json:"total_baggages"`
	NonfreeBaggages int         `json:"nonfree_baggages"`
	Insurance       string      `json:"insurance"`
	Status          string      `json:"status,omitempty"`
}

// airline is the whole state the tools read and write.
type airline struct {
	rng          *rand.Rand
	flights      map[string]*scheduledFlight
	flightOrder  []string                         // flight numbers, sorted
	days         map[string]map[string]*flightDay // number → date → day
	users        map[string]*user
	userOrder    []string
	reservations map[string]*reservation
	usedIDs      map[string]bool
}

var (
	firstNames = strings.Fields(`Mia Liam Olivia Noah Emma Ethan Ava Lucas Sofia Mason Amelia James Harper Yusuf Aarav Chen Fatima
	Mei Raj Ivan Lei Omar Anya Mateo Isabella Daiki Priya Juan Chloe Sven Nadia Kenji Ahmed Lucia Mohamed Yara Anna Arjun Ines Hugo`)
	lastNames = strings.Fields(`Li Smith Garcia Kim Nguyen Patel Muller Silva Rossi Johansson Kowalski Ahmed Tanaka Brown Lopez
	Wilson Moore Davis Martin Sanchez Thomas Jackson White Harris Clark Lewis Young Hall Allen Wright Khan Ali Chen Wang Ito`)
	streets = strings.Fields(`Maple Oak Pine Cedar Elm Willow Lake Hill Park River Sunset Main Spring Highland Laurel`)
	cities  = [][3]string{
		{"Austin", "TX", "78701"}, {"Denver", "CO", "80202"}, {"Seattle", "WA", "98101"}, {"Boston", "MA", "02108"},
		{"Phoenix", "AZ", "85004"}, {"Chicago", "IL", "60601"}, {"Miami", "FL", "33130"}, {"Portland", "OR", "97205"},
		{"San Diego", "CA", "92101"}, {"Columbus", "OH", "43215"}, {"Charlotte", "NC", "28202"}, {"Newark", "NJ", "07102"},
	}
	cardBrands = []string{"visa", "mastercard", "amex", "discover"}
)

// newAirline generates the timetable, users and reservations.
func newAirline(rng *rand.Rand, nUsers int) *airline {
	al := &airline{
		rng:          rng,
		flights:      map[string]*scheduledFlight{},
		days:         map[string]map[string]*flightDay{},
		users:        map[string]*user{},
		reservations: map[string]*reservation{},
		usedIDs:      map[string]bool{},
	}
	al.genTimetable()
	for range nUsers {
		al.genUser()
	}
	return al
}

func (al *airline) between(lo, hi int) int { return lo + al.rng.IntN(hi-lo+1) }

// genTimetable makes each airport fly to several others, one to three flights a day each way,
// and gives every flight a status, seats and prices for each day of May 2025.
func (al *airline) genTimetable() {
	used := map[int]bool{}
	for i, o := range airports {
		for j, d := range airports {
			if i == j || al.rng.IntN(100) >= 38 {
				continue
			}
			hours := 1 + al.rng.IntN(6)
			for range al.between(3, 7) {
				n := al.between(100, 999)
				for used[n] {
					n = al.between(100, 999)
				}
				used[n] = true
				dep := al.between(5, 22)
				depMin := 5 * al.rng.IntN(12)
				arrTotal := dep*60 + depMin + hours*60 + 5*al.rng.IntN(12)
				f := &scheduledFlight{
					Number: fmt.Sprintf("QV%d", n), Origin: o.IATA, Destination: d.IATA,
					Departure: fmt.Sprintf("%02d:%02d:00", dep, depMin),
					Arrival:   fmt.Sprintf("%02d:%02d:00", (arrTotal/60)%24, arrTotal%60),
					NextDay:   arrTotal >= 24*60,
				}
				base := 40 + 25*hours + al.rng.IntN(40)
				f.basePrice = [3]int{base, base*2 + al.rng.IntN(30), base*5 + al.rng.IntN(120)}
				al.flights[f.Number] = f
				al.flightOrder = append(al.flightOrder, f.Number)
			}
		}
	}
	slices.Sort(al.flightOrder)
	for _, num := range al.flightOrder {
		f := al.flights[num]
		days := map[string]*flightDay{}
		for d := 1; d <= 31; d++ {
			date := time.Date(2025, time.May, d, 0, 0, 0, 0, time.UTC)
			fd := &flightDay{}
			for c := range 3 {
				fd.Prices[c] = f.basePrice[c] * (85 + al.rng.IntN(40)) / 100
				fd.Seats[c] = al.rng.IntN(21)
			}
			switch {
			case date.Before(today.Truncate(24 * time.Hour)):
				fd.Status = "landed"
				switch r := al.rng.IntN(100); {
				case r < 6:
					fd.Status = "cancelled"
				case r < 20:
					fd.ActualDeparture = shiftTime(f.Departure, 30+5*al.rng.IntN(30))
					fd.ActualArrival = shiftTime(f.Arrival, 30+5*al.rng.IntN(30))
				default:
					fd.ActualDeparture = shiftTime(f.Departure, al.rng.IntN(10))
					fd.ActualArrival = shiftTime(f.Arrival, al.rng.IntN(10)-5)
				}
			case date.Equal(today.Truncate(24 * time.Hour)):
				fd.Status = []string{"on time", "delayed", "flying", "cancelled", "on time", "delayed"}[al.rng.IntN(6)]
			default:
				fd.Status = "available"
			}
			days[date.Format(dateLayout)] = fd
		}
		al.days[num] = days
	}
}

func shiftTime(hms string, minutes int) string {
	t, _ := time.Parse("15:04:05", hms)
	return t.Add(time.Duration(minutes) * time.Minute).Format("15:04:05")
}

func (al *airline) newID(prefix string, digits int) string {
	for {
		var b strings.Builder
		b.WriteString(prefix)
		for range digits {
			b.WriteByte(byte('0' + al.rng.IntN(10)))
		}
		if id := b.String(); !al.usedIDs[id] {
			al.usedIDs[id] = true
			return id
		}
	}
}

func (al *airline) newReservationID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for {
		b := make([]byte, 6)
		for i := range b {
			b[i] = alphabet[al.rng.IntN(len(alphabet))]
		}
		if id := string(b); !al.usedIDs[id] {
			al.usedIDs[id] = true
			return id
		}
	}
}

func randomDOB(rng *rand.Rand, minAge, maxAge int) string {
	year := 2025 - minAge - rng.IntN(maxAge-minAge+1)
	return time.Date(year, time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC).Format(dateLayout)
}

// newPerson makes up a passenger (with the given last name, if any).
func newPerson(rng *rand.Rand, last string) person {
	if last == "" {
		last = lastNames[rng.IntN(len(lastNames))]
	}
	return person{FirstName: firstNames[rng.IntN(len(firstNames))], LastName: last, DOB: randomDOB(rng, 3, 80)}
}

func (al *airline) genUser() *user {
	first := firstNames[al.rng.IntN(len(firstNames))]
	last := lastNames[al.rng.IntN(len(lastNames))]
	var id string
	for id == "" || al.users[id] != nil {
		id = fmt.Sprintf("%s_%s_%d", strings.ToLower(first), strings.ToLower(last), al.between(1000, 9999))
	}
	city := cities[al.rng.IntN(len(cities))]
	u := &user{
		UserID: id,
		Name:   nameOf{first, last},
		Address: address{
			Address1: fmt.Sprintf("%d %s Street", al.between(10, 999), streets[al.rng.IntN(len(streets))]),
			Address2: fmt.Sprintf("Suite %d", al.between(100, 999)),
			City:     city[0], Country: "USA", State: city[1], Zip: city[2],
		},
		Email:      fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(first), strings.ToLower(last), al.between(1, 99)),
		DOB:        randomDOB(al.rng, 20, 75),
		Membership: []string{"regular", "regular", "silver", "gold"}[al.rng.IntN(4)],
	}
	for range al.between(1, 2) {
		u.PaymentMethods = append(u.PaymentMethods, paymentMethod{Source: "credit_card", ID: al.newID("credit_card_", 7),
			Brand: cardBrands[al.rng.IntN(len(cardBrands))], LastFour: fmt.Sprintf("%04d", al.rng.IntN(10000))})
	}
	for range al.rng.IntN(3) {
		u.PaymentMethods = append(u.PaymentMethods, paymentMethod{Source: "gift_card", ID: al.newID("gift_card_", 7), Amount: float64(al.between(20, 300))})
	}
	if al.rng.IntN(3) == 0 {
		u.PaymentMethods = append(u.PaymentMethods, paymentMethod{Source: "certificate", ID: al.newID("certificate_", 7), Amount: float64(50 * al.between(2, 10))})
	}
	for range al.rng.IntN(3) {
		u.SavedPassengers = append(u.SavedPassengers, newPerson(al.rng, ""))
	}
	al.users[id] = u
	al.userOrder = append(al.userOrder, id)
	for range al.between(2, 6) {
		al.genReservation(u)
	}
	return u
}

// directFlights lists the timetable's flights from origin to destination, in number order.
func (al *airline) directFlights(origin, destination string) []*scheduledFlight {
	var out []*scheduledFlight
	for _, num := range al.flightOrder {
		if f := al.flights[num]; f.Origin == origin && f.Destination == destination {
			out = append(out, f)
		}
	}
	return out
}

// genReservation books, for a user, a past or future trip on a route with direct flights.
func (al *airline) genReservation(u *user) {
	var out []*scheduledFlight
	for len(out) == 0 {
		f := al.flights[al.flightOrder[al.rng.IntN(len(al.flightOrder))]]
		out = []*scheduledFlight{f}
	}
	back := al.directFlights(out[0].Destination, out[0].Origin)
	day := al.between(2, 29)
	r := &reservation{
		ReservationID: al.newReservationID(),
		UserID:        u.UserID,
		Origin:        out[0].Origin,
		Destination:   out[0].Destination,
		FlightType:    "one_way",
		Cabin:         cabins[al.rng.IntN(3)],
		Insurance:     []string{"yes", "no", "no"}[al.rng.IntN(3)],
	}
	ci := slices.Index(cabins, r.Cabin)
	date := time.Date(2025, time.May, day, 0, 0, 0, 0, time.UTC)
	r.Flights = append(r.Flights, resFlight{Origin: r.Origin, Destination: r.Destination, FlightNumber: out[0].Number,
		Date: date.Format(dateLayout), Price: al.days[out[0].Number][date.Format(dateLayout)].Prices[ci]})
	if len(back) > 0 && day <= 27 && al.rng.IntN(2) == 0 {
		r.FlightType = "round_trip"
		bf := back[al.rng.IntN(len(back))]
		bd := date.AddDate(0, 0, al.between(2, 4)).Format(dateLayout)
		r.Flights = append(r.Flights, resFlight{Origin: bf.Origin, Destination: bf.Destination, FlightNumber: bf.Number, Date: bd, Price: al.days[bf.Number][bd].Prices[ci]})
	}
	r.Passengers = append(r.Passengers, person{u.Name.FirstName, u.Name.LastName, u.DOB})
	for range al.rng.IntN(3) {
		if len(u.SavedPassengers) > 0 && al.rng.IntN(2) == 0 {
			p := u.SavedPassengers[al.rng.IntN(len(u.SavedPassengers))]
			if !slices.Contains(r.Passengers, p) {
				r.Passengers = append(r.Passengers, p)
			}
			continue
		}
		r.Passengers = append(r.Passengers, newPerson(al.rng, u.Name.LastName))
	}
	total := 0
	for _, f := range r.Flights {
		total += f.Price * len(r.Passengers)
	}
	if r.Insurance == "yes" {
		total += insurancePrice * len(r.Passengers)
	}
	free := freeBags(u.Membership, r.Cabin) * len(r.Passengers)
	r.TotalBaggages = al.rng.IntN(free + 2)
	r.NonfreeBaggages = max(r.TotalBaggages-free, 0)
	total += bagFee * r.NonfreeBaggages
	pm := u.PaymentMethods[al.rng.IntN(len(u.PaymentMethods))]
	if pm.Source != "credit_card" {
		pm = u.PaymentMethods[0]
	}
	r.PaymentHistory = []payment{{PaymentID: pm.ID, Amount: float64(total)}}
	created := date.AddDate(0, 0, -al.between(3, 40)).Add(time.Duration(al.between(0, 86399)) * time.Second)
	if date.After(today) && al.rng.IntN(6) == 0 {
		created = today.Add(-time.Duration(al.between(1, 20)) * time.Hour) // booked in the last day
	}
	r.CreatedAt = created.Format("2006-01-02T15:04:05")
	if date.Before(today) && al.rng.IntN(5) == 0 {
		r.Status = "cancelled"
	}
	al.reservations[r.ReservationID] = r
	u.Reservations = append(u.Reservations, r.ReservationID)
}

// The policy's figures.
const (
	insurancePrice = 30 // per passenger
	bagFee         = 50 // per bag above the free allowance
	maxBaggages    = 9
)

// freeBags is the free checked bags per passenger for a membership and cabin.
func freeBags(membership, cabin string) int {
	allow := map[string][3]int{
		"regular": {0, 1, 2},
		"silver":  {1, 2, 3},
		"gold":    {2, 3, 4},
	}[membership]
	return allow[slices.Index(cabins, cabin)]
}
