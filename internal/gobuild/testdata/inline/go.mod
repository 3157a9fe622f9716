module example.com/inline

go 1.22
