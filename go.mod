module github.com/calltrail/calltrail

go 1.22

require github.com/google/pprof v0.0.0-20241210010833-40e02aabc2ad
