// Package safehttp holds the fetch helpers shared by agent and gateway:
// a redirect policy that keeps a bearer key on the host first asked, a
// size-capped body read, a JSON content-type check, and the wording of
// transport errors so that no URL, host, port, key or body ever reaches
// an error message. Text the far side wrote goes through lloom.RedactText
// instead, the one redaction pass; this package imports nothing of
// poolsolve's.
package safehttp
