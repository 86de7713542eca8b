package kafkaperf

import (
	"errors"
	"fmt"
	"strings"

	"github.com/IBM/sarama"

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
	var cfgErr sarama.ConfigurationError
	if errors.As(err, &cfgErr) {
		return "org.apache.kafka.common.config.ConfigException: " + string(cfgErr)
	}
	if strings.HasPrefix(err.Error(), "org.apache.kafka") {
		return err.Error()
	}
	return "org.apache.kafka.common.KafkaException: " + err.Error()
}

// exceptionLine renders a send or fetch failure the way Java's
// printStackTrace starts: the exception class, a colon and the message.
func exceptionLine(err error) string {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return fmt.Sprintf("org.apache.kafka.common.errors.%s: %s", kafkaExceptionName(kerr), kerr.Error())
	}
	if errors.Is(err, errBufferExhausted) {
		return err.Error()
	}
	if errors.Is(err, sarama.ErrShuttingDown) {
		// Still unacknowledged when the delivery timeout ran out.
		return "org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s): delivery.timeout.ms has passed since the record was sent"
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
// codes a producer is likely to meet.
var kafkaExceptionNames = map[sarama.KError]string{
	sarama.ErrUnknownTopicOrPartition:      "UnknownTopicOrPartitionException",
	sarama.ErrLeaderNotAvailable:           "LeaderNotAvailableException",
	sarama.ErrNotLeaderForPartition:        "NotLeaderOrFollowerException",
	sarama.ErrRequestTimedOut:              "TimeoutException",
	sarama.ErrMessageSizeTooLarge:          "RecordTooLargeException",
	sarama.ErrNetworkException:             "NetworkException",
	sarama.ErrNotEnoughReplicas:            "NotEnoughReplicasException",
	sarama.ErrNotEnoughReplicasAfterAppend: "NotEnoughReplicasAfterAppendException",
	sarama.ErrInvalidRequiredAcks:          "InvalidRequiredAcksException",
	sarama.ErrTopicAuthorizationFailed:     "TopicAuthorizationException",
	sarama.ErrOutOfOrderSequenceNumber:     "OutOfOrderSequenceException",
	sarama.ErrDuplicateSequenceNumber:      "DuplicateSequenceException",
	sarama.ErrKafkaStorageError:            "KafkaStorageException",
	sarama.ErrInvalidRecord:                "InvalidRecordException",
}

func kafkaExceptionName(k sarama.KError) string {
	if n, ok := kafkaExceptionNames[k]; ok {
		return n
	}
	return "ApiException"
}
