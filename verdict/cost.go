package verdict

import (
	"fmt"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// costEpsilon absorbs float noise when a total is compared with a cap.
const costEpsilon = 1e-9

// CostCapReached says whether the session's spending has reached maxCost
// (<= 0: no cap), and the message that says so.
func CostCapReached(u *state.UsageTotals, maxCost float64) (string, bool) {
	if maxCost <= 0 || u == nil || u.Cost == nil || u.Cost.Amount < maxCost-costEpsilon {
		return "", false
	}
	return fmt.Sprintf("the session has spent %s of its max_cost %s", u.Cost, eventlog.Cost{Amount: maxCost, Currency: u.Cost.Currency}), true
}
