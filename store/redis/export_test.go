package redis

// For the external tests: the server's URL (or a skip) and key cleanup.
var (
	TestURL    = testURL
	DeleteKeys = deleteKeys
)
