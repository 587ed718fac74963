package scaling

import "fmt"

// NoteKind is what a Note reports about a value.
type NoteKind int

const (
	// Shaped: a rule moved the value (minAllowed, a LimitRange, a limit/request ratio, a gap) without holding
	// it below what was wanted.
	Shaped NoteKind = iota
	// Capped: a bound held the value below what was wanted (maxAllowed, the interval's per-pod maximum, an
	// unchanged limit). An Hvpa with a capped value reports ScalingLimited.
	Capped
)

// Note says what capped or shaped one value of a decision.
type Note struct {
	Resource Resource
	Kind     NoteKind
	// Limit: the note says where the resource's limit comes from (requestToLimitRatio, the gap, a LimitRange
	// bound that moved request and limit together).
	Limit bool
	Text  string
}

// String is the note's text.
func (n Note) String() string { return n.Text }

func shaped(r Resource, format string, args ...any) Note {
	return Note{Resource: r, Kind: Shaped, Text: fmt.Sprintf(format, args...)}
}

func cappedNote(r Resource, format string, args ...any) Note {
	return Note{Resource: r, Kind: Capped, Text: fmt.Sprintf(format, args...)}
}

func limitFrom(r Resource, format string, args ...any) Note {
	return Note{Resource: r, Kind: Shaped, Limit: true, Text: fmt.Sprintf(format, args...)}
}

// NoteTexts are the notes' texts, in order.
func NoteTexts(notes []Note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.Text
	}
	return out
}

// HasLimitNote reports whether a note already says where r's limit comes from.
func HasLimitNote(notes []Note, r Resource) bool {
	for _, n := range notes {
		if n.Limit && n.Resource == r {
			return true
		}
	}
	return false
}
