package grpcserver

import (
	"log/slog"

	"github.com/cloudwego/kitex/pkg/kerrors"

	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of A2A errors.
const ErrorDomain = pbconv.ErrorDomain

// statusError returns err as the error a Kitex handler returns for a gRPC
// status (pbconv.StatusOf): code per the specification, the error's
// message, a google.rpc.ErrorInfo for A2A errors and a google.rpc.RetryInfo
// for retryable ones. The status travels as a Kitex GRPCBizStatusError: for
// a plain error Kitex would append " [biz error]" to the message.
func statusError(log *slog.Logger, method string, err error) error {
	st, derr := pbconv.StatusOf(server.ProtocolError(log, method, err))
	if derr != nil {
		log.Error("a2a: gRPC status details do not encode", "err", derr)
	}
	be := kerrors.NewGRPCBizStatusError(int32(st.Code()), st.Message())
	be.(*kerrors.GRPCBizStatusError).SetGRPCStatus(st)
	return be
}
