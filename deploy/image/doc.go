// Package image is the container image of a2amesh, one for every agent and
// the gateway: Containerfile (what `make image` builds on scratch from a
// context the Makefile stages), Containerfile.multistage (the same image
// built from source), and passwd and group, which name its user. It has no
// Go API; its test (build tag image, run by `make test-image`) builds the
// image, exports its files and serves A2A requests from them as the
// image's user, with the root file system read-only. docs/deploy.md
// describes the image.
package image
