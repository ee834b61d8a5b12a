package plan

import "errors"

var errNilPlan = errors.New("plan: no plan to write")
