module github.com/calltrail/calltrail

go 1.22
