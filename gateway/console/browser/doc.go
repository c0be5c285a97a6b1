// Package browser holds the gateway console's test in a real browser
// (Debian's chromium, headless, driven with chromedp). It is a module of
// its own so that chromedp is a requirement of this test alone, not of
// the a2amesh module its users import.
package browser
