// Package javaopts parses command lines the way the Java option libraries
// behind the benchmark tools do, and prints their help, usage and error
// texts byte for byte. Each tool declares its options once, as a table,
// and the same table drives parsing and help.
//
//   - ArgParser emulates argparse4j 0.7.0 (Kafka's kafka-producer-perf-test):
//     "--flag value" and "--flag=value", unambiguous prefixes, negative
//     integers as values, nargs "+" lists that stop at the next flag,
//     mutually exclusive groups, the last missing required argument
//     reported, "Did you mean" suggestions, and the help layout with its
//     BreakIterator line breaks and fully justified lines.
//   - JoptParser emulates jopt-simple 5.0.4 as Kafka configures it
//     (kafka-consumer-perf-test): full long names only, required and
//     optional arguments, values converted only when read, requiredUnless,
//     and the 80-column help table.
//
// Both hand back what the original prints as an *Exit (stdout, stderr,
// exit code), so a tool's Main writes it and returns the code.
//
// Why not pflag: the design suggests pre-parsing and handing pflag what it
// understands, but none of the rules that scripts depend on survive that
// translation. pflag has no prefix matching, no argparse nargs "+", no
// "-1 is a value but -1.5 is a flag" rule, no jopt-style lazy conversion or
// optional argument that is taken only if it converts, and its errors and
// help text are its own; emulating them on top of it would mean rewriting
// the token stream and then undoing pflag's messages. Both libraries'
// scanners are small, so each is reproduced directly here, following the
// originals' logic (not their code), and checked against the originals:
// testdata holds the output of argparse4j 0.7.0, jopt-simple 5.0.4 and
// JDK 17's BreakIterator for the Kafka tables and many command lines.
//
// Shared pieces: lineSegments (java.text.BreakIterator.getLineInstance,
// used by both help formatters), ParseJavaLong/ParseJavaInt/ParseJavaDouble
// (Long.valueOf and friends, with the NumberFormatException messages), and
// Exit.
//
//   - CommonsParser emulates commons-cli 1.9.0's DefaultParser and
//     HelpFormatter (RabbitMQ PerfTest, RocketMQ's benchmark): one-letter
//     and single-dash long names such as -qq and -ak, partial matching of
//     long names, glued and optional values, repeatable options.
package javaopts
