package updater

// Event reasons. Normal: an action taken; Warning: an update not made, with its reason in the message.
const (
	EventResizedInPlace         = "ResizedInPlace"
	EventResizeFallbackEviction = "ResizeFallbackEviction"
	EventEvicted                = "Evicted"
	EventUpdateSkipped          = "UpdateSkipped"
	EventEvictionBlocked        = "EvictionBlocked"
	EventLoopDetected           = "UpdateLoopDetected"
)
