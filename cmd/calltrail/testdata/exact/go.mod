module example.com/exact

go 1.22
