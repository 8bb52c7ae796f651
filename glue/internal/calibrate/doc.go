// Package calibrate learns, for one session and model, how the model's reported prompt token
// count relates to adkctx's estimate (package budget), and predicts the count of the next request
// with a safety margin for the hard limit (budget.MarginSource). The engine keeps one Calibration
// per session and model, stores it with every model response and rebuilds it from stored events
// by replaying Observe.
package calibrate
