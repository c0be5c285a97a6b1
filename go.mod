module github.com/a2amesh/a2amesh

go 1.26.8

require github.com/google/uuid v1.6.0
