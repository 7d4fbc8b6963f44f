// Package runlettest helps test code that uses Runlet, as net/http/httptest
// helps test HTTP code: a scripted fake Model, fake wire servers that speak
// the providers' real protocols on loopback (with injected faults), and an
// HTTP record/replay transport.
package runlettest
