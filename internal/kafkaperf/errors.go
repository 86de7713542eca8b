package kafkaperf

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/perfclones/perfclones/internal/jvm"
)

// configError is a client setting the Java client rejects when it is
// built: its ConfigException's message.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// configException is the ConfigException a configError stands for.
func configException(msg string) jvm.Exception {
	return jvm.Exception{Class: "org.apache.kafka.common.config.ConfigException", Message: msg}
}

// constructionFailed is the exception the Java clients throw when they
// cannot be built: a KafkaException caused by the ConfigException.
func constructionFailed(client string, cause *configError) (jvm.Exception, jvm.Exception) {
	return jvm.Exception{Class: "org.apache.kafka.common.KafkaException", Message: "Failed to construct kafka " + client},
		configException(cause.msg)
}

var errBufferExhausted = errors.New("org.apache.kafka.common.errors.TimeoutException")

// javaClientError names a client-side failure as the Java tool's stack
// trace would start.
func javaClientError(err error) string {
	if strings.HasPrefix(err.Error(), "org.apache.kafka") {
		return err.Error()
	}
	var kerrErr *kerr.Error
	if errors.As(err, &kerrErr) {
		return exceptionLine(err)
	}
	return "org.apache.kafka.common.KafkaException: " + err.Error()
}

// exceptionLine renders a send or fetch failure the way Java's
// printStackTrace starts: the exception class, a colon and the message.
// A broker's error code becomes the Java client's exception for it, with
// the Java client's message for the code.
func exceptionLine(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return fmt.Sprintf("org.apache.kafka.common.errors.%s: %s", kafkaExceptionName(ke), ke.Description)
	}
	if strings.HasPrefix(err.Error(), "org.apache.kafka") {
		return err.Error()
	}
	return "org.apache.kafka.common.KafkaException: " + err.Error()
}

// exceptionClass is the class of an exception line, the kind a result
// file counts errors by.
func exceptionClass(line string) string {
	class, _, _ := strings.Cut(line, ": ")
	return class
}

// kafkaExceptionNames are the Java exception classes of the broker error
// codes a client is likely to meet.
var kafkaExceptionNames = map[int16]string{
	kerr.CorruptMessage.Code:                     "CorruptRecordException",
	kerr.UnknownTopicOrPartition.Code:            "UnknownTopicOrPartitionException",
	kerr.LeaderNotAvailable.Code:                 "LeaderNotAvailableException",
	kerr.NotLeaderForPartition.Code:              "NotLeaderOrFollowerException",
	kerr.RequestTimedOut.Code:                    "TimeoutException",
	kerr.MessageTooLarge.Code:                    "RecordTooLargeException",
	kerr.NetworkException.Code:                   "NetworkException",
	kerr.InvalidTopicException.Code:              "InvalidTopicException",
	kerr.NotEnoughReplicas.Code:                  "NotEnoughReplicasException",
	kerr.NotEnoughReplicasAfterAppend.Code:       "NotEnoughReplicasAfterAppendException",
	kerr.InvalidRequiredAcks.Code:                "InvalidRequiredAcksException",
	kerr.InvalidGroupID.Code:                     "InvalidGroupIdException",
	kerr.TopicAuthorizationFailed.Code:           "TopicAuthorizationException",
	kerr.GroupAuthorizationFailed.Code:           "GroupAuthorizationException",
	kerr.ClusterAuthorizationFailed.Code:         "ClusterAuthorizationException",
	kerr.OutOfOrderSequenceNumber.Code:           "OutOfOrderSequenceException",
	kerr.DuplicateSequenceNumber.Code:            "DuplicateSequenceException",
	kerr.InvalidProducerEpoch.Code:               "InvalidProducerEpochException",
	kerr.TransactionalIDAuthorizationFailed.Code: "TransactionalIdAuthorizationException",
	kerr.KafkaStorageError.Code:                  "KafkaStorageException",
	kerr.SaslAuthenticationFailed.Code:           "SaslAuthenticationException",
	kerr.UnknownProducerID.Code:                  "UnknownProducerIdException",
	kerr.InvalidRecord.Code:                      "InvalidRecordException",
}

func kafkaExceptionName(k *kerr.Error) string {
	if n, ok := kafkaExceptionNames[k.Code]; ok {
		return n
	}
	return "ApiException"
}
