package budget

// MarginSource says where the safety margin the budget adds to a request's predicted token count
// comes from (see Calibration in the package documentation): BudgetExceededError.MarginSource of
// package processors/request, and the "margin_source" field of the "budget decision" log entry.
type MarginSource string

// The sources of a margin.
const (
	// MarginPrior: the model has reported no count for the session yet, so the margin is a prior
	// (10% of the prediction): a guess at the estimator's error, not a measure of it.
	MarginPrior MarginSource = "prior"
	// MarginLearned: the model has reported counts; the margin is the largest recent under-count
	// observed over the part of the request not yet counted (starting from 10% of an unanchored
	// prediction and 25% of what an anchored one adds, and decaying).
	MarginLearned MarginSource = "learned"
)
