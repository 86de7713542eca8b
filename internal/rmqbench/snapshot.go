package rmqbench

// The snapshots the runs take every second and the reports read: the data
// between run.go (which takes them) and report.go (which formats them),
// so that neither uses the other.

// The originals keep the newest windowSize one-second snapshots and print
// nothing until they have all ten, whatever the report interval.
const windowSize = 10

// producerSnap is one of the producer's one-second snapshots: the time
// (epoch ms) and the cumulative counters then.
type producerSnap struct {
	At                 int64
	SendOK, SendFailed int64
	RespOK, RespFailed int64
	RTTotal            int64 // ms, over RespOK
}

// consumerSnap is one of the consumer's snapshots.
type consumerSnap struct {
	At                 int64
	Count              int64
	B2CTotal, S2CTotal int64 // ms
	Failed             int64
}

// batchSnap is one of the batch producer's snapshots.
type batchSnap struct {
	At                 int64
	SendOK, SendFailed int64 // batches
	MsgOK, MsgFailed   int64 // messages
	RTTotal            int64 // ms, over SendOK
}
