package check

// GRPCStatus is the gRPC status name a gRPC client reads from an Envoy answer of the given
// HTTP status that carries no grpc-status of its own (the kind suite compares live gRPC
// answers with it).
func GRPCStatus(httpStatus int) string { return grpcStatus(httpStatus) }
