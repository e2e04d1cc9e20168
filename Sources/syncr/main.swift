import SyncrCore
print("syncr")
