# Thin wrappers around scripts/; the scripts are the reference.
.PHONY: build test services services-stop run-all clean

build:
	scripts/build

test:
	scripts/test

services:
	scripts/services start all

services-stop:
	scripts/services stop

run-all:
	scripts/run-all

# Stops the local servers first: their state lives in .services/.
clean:
	scripts/services stop
	rm -rf bin dist .services
