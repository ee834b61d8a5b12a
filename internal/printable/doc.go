// Package printable makes text from the inputs safe to show on a
// terminal. Ids, reasons and notes come from files anyone may write, and
// a terminal obeys the control characters in what it prints: an OSC
// sequence (ESC ] 0 ; ... BEL) sets the window title, a CSI one moves the
// cursor or repaints, a carriage return writes over the line, and U+202E
// (right-to-left override) shows the rest of a line reversed.
//
// String escapes each such character the way %q does in poolsolve's error
// messages (\x1b, \a, \n, \u202e, and \xff for a byte that is not UTF-8),
// leaving every printable character, any script's included, as it is;
// Lines does the same but keeps line breaks, for multi-line messages;
// Copy applies String to every string in a Go value (map keys aside),
// for a text renderer to print from.
//
// It does not quote, so text that needs no escape prints as before, and
// it does not touch JSON or SVG output, whose encoders escape for their
// own formats.
package printable
