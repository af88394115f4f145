// Package limits holds kandev's rules about an agent's usage window: how
// a reported window is read and made sane (window.go), whether work that
// nobody follows may start near the limit (gate.go), and how much
// unattended continuation may spend after a reset (budget.go). Every
// function here is a pure function of its data and the clock; the owner
// (acp/owner) acts on what they decide.
package limits
